// swift-tools-version: 6.1
// Micro benchmarks of flow's hot paths, kept in their own package so the project's build
// and CI do not pay for the harness. Run: `swift run -c release --package-path bench/micro flow-micro`
import PackageDescription

let package = Package(
    name: "flow-micro",
    dependencies: [
        .package(name: "flow", path: "../.."),
        .package(url: "https://github.com/google/swift-benchmark", from: "0.1.2"),
    ],
    targets: [
        .executableTarget(
            name: "flow-micro",
            dependencies: [
                .product(name: "FlowKit", package: "flow"),
                .product(name: "Benchmark", package: "swift-benchmark"),
            ]
        ),
    ],
    swiftLanguageModes: [.v5]
)
