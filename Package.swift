// swift-tools-version: 6.1
import PackageDescription

/// The directory of this manifest, for linker paths that must not depend on where
/// `swift build` is run from.
let packageRoot = String(#filePath.dropLast("Package.swift".count))

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
            providers: [.apt(["libyaml-dev"]), .brew(["libyaml"])]
        ),
        // All logic: load, parse, validate, plan, execute, report.
        // C shims for what Swift's Glibc import lacks (spawn file actions, pidfd, siginfo).
        .target(name: "CFlowSys"),
        // SQLite's process-wide options (a C shim: sqlite3_config is variadic).
        // Linked statically on Linux (`libsqlite3.a`, in libsqlite3-dev): a shared libsqlite3
        // is loaded and relocated (3,000 relocations) at every start of every command.
        .target(
            name: "CFlowSQLite",
            linkerSettings: [
                .linkedLibrary(":libsqlite3.a", .when(platforms: [.linux])),
                .linkedLibrary("sqlite3", .when(platforms: [.macOS])),
            ]
        ),
        // Release builds skip dynamic exclusivity checks: the parser and validator touch
        // class properties of 100,000-step trees millions of times (measured: 7-8% of the
        // instructions of `flow validate` on bench/out/static100k). Debug builds and tests
        // keep the checks.
        .target(
            name: "FlowKit",
            dependencies: ["CYAML", "CFlowSys"],
            swiftSettings: [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))],
            // libyaml statically on Linux (`libyaml.a`, in libyaml-dev), for the same reason
            // as SQLite (CYAML's module map names no library, so this is the only link).
            linkerSettings: [
                .linkedLibrary(":libyaml.a", .when(platforms: [.linux])),
                .linkedLibrary("yaml", .when(platforms: [.macOS])),
            ]
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
        // toolchain).
        .executableTarget(
            name: "flow",
            dependencies: [
                "FlowKit",
                "FlowJournal",
                "FlowCommandLine",
            ],
            // It also links libstdc++ and GCC's unwinder statically (see
            // build-support/static-libstdc++/README.md; libgcc_s was one more library to load),
            // and as a position-dependent executable (`-no-pie`): a PIE's loader applies the
            // static Swift runtime's 40,000 relative relocations at every start, and the pages
            // they write (Swift's metadata and witness tables) are copied on first write;
            // without them, a one-step `flow run` had 15% fewer page faults (490 → 417) and
            // 13% less CPU time.
            // The price is the executable's own address (not its libraries', stack's or
            // heap's) being the same in every process, as for Go binaries such as go-task.
            // A position-dependent executable has no relative relocations left to pack, so
            // it is not linked with `-z pack-relative-relocs`: that only added a dependency on
            // GLIBC_ABI_DT_RELR, which refuses to start the binary on glibc before 2.36
            // (Ubuntu 22.04, RHEL 9).
            linkerSettings: [.unsafeFlags(["-use-ld=lld", "-Xclang-linker", "-no-pie", "-Xclang-linker", "-static-libgcc",
                                           "-L", packageRoot + "build-support/static-libstdc++"],
                                          .when(platforms: [.linux], configuration: .release))]
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
