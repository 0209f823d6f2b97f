/// Which standard stream a chunk of captured output came from.
public enum OutputChannel: Sendable, Hashable {
    case stdout
    case stderr
}
