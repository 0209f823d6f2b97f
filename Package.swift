// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "flow",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "flow", targets: ["flow"]),
        .library(name: "FlowKit", targets: ["FlowKit"]),
    ],
    dependencies: [],
    targets: [
        // libyaml itself, read through its event API (see docs/architecture.md).
        .systemLibrary(
            name: "CYAML",
            pkgConfig: "yaml-0.1",
            providers: [.apt(["libyaml-dev"]), .brew(["libyaml"])]
        ),
        // All logic: load, parse, validate, plan, execute, report.
        // C shims for what Swift's Glibc import lacks (spawn file actions, pidfd, siginfo).
        .target(name: "CFlowSys"),
        // SQLite's process-wide options (a C shim: sqlite3_config is variadic).
        .target(name: "CFlowSQLite", linkerSettings: [.linkedLibrary("sqlite3")]),
        // Release builds skip dynamic exclusivity checks: the parser and validator touch
        // class properties of 100,000-step trees millions of times (measured: 7-8% of the
        // instructions of `flow validate` on bench/out/static100k). Debug builds and tests
        // keep the checks.
        .target(
            name: "FlowKit",
            dependencies: ["CYAML", "CFlowSys"],
            swiftSettings: [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]
        ),
        // The run journal: an observer of the event stream, in SQLite (kept out of FlowKit so
        // static commands never load a database library).
        .target(
            name: "FlowJournal",
            dependencies: [
                "FlowKit",
                "CFlowSQLite",
            ]
        ),
        // The command line as data: parsing, help, usage errors, completion scripts, with
        // swift-argument-parser's conventions but no reflection (see `CommandSpec`).
        .target(name: "FlowCommandLine", dependencies: ["FlowKit"]),
        // The thin command-line front end. Release builds link with lld (shipped with the
        // toolchain) and packed relative relocations: the static Swift runtime brings 40,000
        // of them, a 1 MB table the loader would read on every start (8 KB packed; glibc
        // 2.36+ applies them).
        .executableTarget(
            name: "flow",
            dependencies: [
                "FlowKit",
                "FlowJournal",
                "FlowCommandLine",
            ],
            linkerSettings: [.unsafeFlags(["-use-ld=lld", "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs"], .when(configuration: .release))]
        ),
        // What the end-to-end tests and their helper child need from C (a pseudo-terminal,
        // prctl).
        .target(name: "CTestSupport", path: "Tests/CTestSupport"),
        // A small child process for the end-to-end and signal tests.
        .executableTarget(name: "flow-test-child", dependencies: ["CTestSupport"]),
        // Timing of the process layer against a C posix_spawn loop (bench/), and a helper
        // process for the process tests that must lower their own limits.
        .executableTarget(name: "flow-proc-bench", dependencies: ["FlowKit"]),
        .testTarget(name: "ProcessTests", dependencies: ["FlowKit", "flow-test-child", "flow-proc-bench"]),
        .testTarget(name: "FlowKitTests", dependencies: ["FlowKit"]),
        .testTarget(name: "FlowCommandLineTests", dependencies: ["FlowCommandLine"]),
        .testTarget(name: "FlowJournalTests", dependencies: ["FlowJournal", "FlowKit", "CFlowSQLite"]),
        .testTarget(
            name: "FlowEndToEndTests",
            dependencies: ["flow", "flow-test-child", "CTestSupport", "FlowJournal"],
            exclude: ["Fixtures"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
