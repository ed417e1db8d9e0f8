// swift-tools-version:6.0
import PackageDescription

// The air-quality app's own API, served by a Hummingbird server that embeds Vltava as a
// library (docs/EMBEDDING.md). It depends on this checkout by path; a backend elsewhere names
// its own path to Vltava.
let package = Package(
    name: "AirQualityServer",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "Vltava", path: "../.."),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
    ],
    targets: [
        // The routes, in a library so the tests can serve them.
        .target(
            name: "AirQuality",
            dependencies: [
                .product(name: "Vltava", package: "Vltava"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        ),
        .executableTarget(name: "AirQualityServer", dependencies: ["AirQuality"]),
        .testTarget(
            name: "AirQualityTests",
            dependencies: ["AirQuality", .product(name: "HummingbirdTesting", package: "hummingbird")]
        ),
    ]
)
