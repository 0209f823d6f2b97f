/// A command whose work is asynchronous (it runs steps). `main` calls `execute()` directly,
/// because ArgumentParser's synchronous default `run()` would win overload resolution there.
protocol AsyncExecutable {
    func execute() async throws
}
