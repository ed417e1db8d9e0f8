// swift-tools-version:6.0
import PackageDescription

// Data flows one way through these modules (see docs/ARCHITECTURE.md):
// files → Store importers → Store → Engine snapshot → QueryLanguage / Server / CLI.
let package = Package(
    name: "Vltava",
    platforms: [.macOS(.v14)],
    products: [
        // The engine as a Swift library (docs/EMBEDDING.md): `import Vltava`.
        .library(name: "Vltava", targets: ["Vltava"]),
        .executable(name: "vltava", targets: ["VltavaCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // `swift package generate-documentation --target Vltava` builds the library's DocC
        // catalogue (Sources/Vltava/Vltava.docc) with the snippets of Snippets/.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        // The PostGIS store (Sources/PostGIS): PostgreSQL's wire protocol, bound parameters only.
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        // Named because the server and the PostGIS store import their modules (NIOCore, NIOPosix,
        // NIOHTTPTypes) directly; Hummingbird and postgres-nio bring the same versions anyway.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        // TLS for webhooks' https:// receivers (already built for postgres-nio).
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        // HTTPFields for the router tests' requests (Tests/ServerTests/RoutedServer.swift).
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        // Graceful shutdown (Hummingbird's own): the change feed's open streams end on SIGTERM.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // HMAC-SHA256 of the webhooks' signature header (postgres-nio builds it already).
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
    ],
    targets: [
        // System libraries, found through pkg-config.
        .systemLibrary(name: "CGEOS", pkgConfig: "geos", providers: [.apt(["libgeos-dev"])]),
        .systemLibrary(name: "CPROJ", pkgConfig: "proj", providers: [.apt(["libproj-dev"])]),
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        // libdeflate inflates small gzip tiles several times faster than zlib (no per-stream
        // state to set up); zlib stays for zlib streams and sizes libdeflate cannot know.
        // GDAL/OGR reads every vector format it knows for the importers (Shapefile, GeoPackage,
        // FlatGeobuf, GPX, KML, GML, …): the field's own library, nothing of it by hand.
        .systemLibrary(name: "CGDAL", pkgConfig: "gdal", providers: [.apt(["libgdal-dev"])]),
        .systemLibrary(name: "CDeflate", pkgConfig: "libdeflate", providers: [.apt(["libdeflate-dev"])]),

        // glibc's malloc_trim, to give a replaced snapshot's pages back to the system.
        .systemLibrary(name: "CMalloc"),

        // libedit (BSD licence) gives the REPL line editing and history.
        .systemLibrary(name: "CEditline", pkgConfig: "libedit", providers: [.apt(["libedit-dev"])]),

        // Value types, codecs, geodesy, GEOS and PROJ bridges.
        // The small pieces every module shares: JSON reading and writing, CSV, UTC times, the
        // Czech stemmer, Locked, Deadline, and the one error classification.
        .target(name: "Support"),
        .target(name: "Geometry", dependencies: ["Support", "CGEOS", "CPROJ"]),
        // A small Swift wrapper over the SQLite C API, shared by the store and the MBTiles reader.
        .target(name: "SQLite", dependencies: ["CSQLite"]),
        // The protobuf wire format and capped gzip/zlib inflating (the package's one inflater),
        // shared by the tile decoders and the OSM PBF reader.
        .target(name: "Wire", dependencies: ["CZlib", "CDeflate"]),
        .target(name: "SpatialIndex", dependencies: ["Geometry"]),
        // The GeoPackage store and its importers: its own streaming GeoJSON and CSV readers,
        // observations, and every vector format GDAL reads.
        .target(name: "Store", dependencies: ["Support", "Geometry", "SQLite", "CGDAL"]),
        // Zoo Praha's own files (the paths graph, the animal lexicon) as import formats, so the
        // generic store knows no one source's formats.
        .target(name: "ZooPraha", dependencies: ["Support", "Geometry", "Store"]),
        // Indoor positioning: venues, floors, beacons, surveys and fingerprint positioning.
        .target(name: "Indoor", dependencies: ["Support", "Geometry", "SQLite", "SpatialIndex", "Store"]),
        .target(name: "VectorTiles", dependencies: ["Support", "Geometry", "SQLite", "Wire"]),
        .target(name: "Routing", dependencies: ["Support", "Geometry", "SpatialIndex", "Wire"]),
        // Moving objects, fences evaluated on every update, and the numbered events they send.
        .target(name: "Live", dependencies: ["Support", "Geometry", "SpatialIndex"]),
        .target(name: "Engine", dependencies: ["Support", "Geometry", "SpatialIndex", "Store", "Indoor", "VectorTiles", "Routing", "Live", "CMalloc"]),
        .target(name: "QueryLanguage", dependencies: ["Support", "Geometry", "Store", "Engine", "VectorTiles"]),
        // A store in PostgreSQL/PostGIS behind the same Engine: `postgresql://` URLs, `vltava push`,
        // and FIND compiled to SQL with bound parameters (docs/ARCHITECTURE.md, "PostGIS").
        .target(
            name: "PostGIS",
            dependencies: [
                "Support", "Geometry", "Store", "Engine",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // The HTTP API (docs/HTTP_API.md) over the Engine, and the map page: static files
        // compiled into the binary, so that a copied `vltava` serves them with no install.
        .target(
            name: "Server",
            dependencies: [
                "Support", "Geometry", "Engine", "QueryLanguage", "VectorTiles", "Store", "CZlib",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            resources: [.embedInCode("MapPage/index.html"), .embedInCode("MapPage/map.css"), .embedInCode("MapPage/map.js"),
                        .embedInCode("MapPage/style.json")]
        ),
        // The library's face: the Engine, the query language and the value types, with
        // reads, queries with bound parameters and rows decoded into the caller's types.
        .target(name: "Vltava", dependencies: ["Support", "Geometry", "Engine", "QueryLanguage", "PostGIS"]),
        // The CLI (the `vltava` executable).
        .executableTarget(
            name: "VltavaCLI",
            dependencies: [
                "Support", "Geometry", "Store", "Indoor", "ZooPraha", "VectorTiles", "Engine", "QueryLanguage", "Server", "CEditline", "PostGIS", "Vltava", "Live",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Counts malloc calls for the benchmark's allocation figures (Benchmarks/CMallocCount).
        .target(name: "CMallocCount", path: "Benchmarks/CMallocCount"),
        .executableTarget(
            name: "vltava-bench",
            dependencies: ["Support", "Geometry", "SpatialIndex", "Store", "Indoor", "VectorTiles", "Routing", "Engine", "QueryLanguage", "CMallocCount", "Wire", "ZooPraha",
                           "TestSupport"],
            path: "Benchmarks/vltava-bench"
        ),

        // Tests: one target per module, plus end-to-end tests of the CLI.
        .target(name: "TestSupport", dependencies: ["Support", "Geometry", "Store", "SQLite", "ZooPraha", "Indoor", "Routing"], path: "Tests/TestSupport"),
        .testTarget(name: "GeometryTests", dependencies: ["Support", "Geometry", "TestSupport"]),
        .testTarget(name: "WireTests", dependencies: ["Wire", "CDeflate"]),
        .testTarget(name: "SpatialIndexTests", dependencies: ["SpatialIndex", "Geometry", "TestSupport"]),
        .testTarget(name: "StoreTests", dependencies: ["Support", "Store", "Geometry", "SQLite", "ZooPraha", "TestSupport"]),
        .testTarget(name: "IndoorTests", dependencies: ["Indoor", "Store", "SpatialIndex", "Geometry", "TestSupport"]),
        .testTarget(name: "ZooPrahaTests", dependencies: ["ZooPraha", "Store", "Geometry", "TestSupport"]),
        .testTarget(name: "VectorTilesTests", dependencies: ["Support", "VectorTiles", "Geometry", "SQLite", "Wire", "TestSupport"]),
        .testTarget(name: "RoutingTests", dependencies: ["Support", "Routing", "Geometry", "SpatialIndex", "TestSupport"]),
        .testTarget(name: "EngineTests", dependencies: ["Support", "Engine", "Live", "Routing", "Store", "Geometry", "SpatialIndex", "VectorTiles", "TestSupport"]),
        .testTarget(name: "QueryLanguageTests", dependencies: ["Support", "QueryLanguage", "Engine", "Store", "SQLite", "TestSupport"]),
        .testTarget(name: "CLITests", dependencies: ["Support", "VltavaCLI", "Engine", "Store", "Geometry", "VectorTiles", "TestSupport", "Live"]),
        .testTarget(name: "VltavaTests", dependencies: ["Support", "Vltava", "TestSupport"]),
        // End-to-end over real HTTP on loopback; depends on the CLI so the binary is built for
        // the tests that import through it and run `vltava serve`.
        .testTarget(name: "ServerTests", dependencies: [
            "Support", "Server", "VltavaCLI", "Engine", "QueryLanguage", "Store", "SQLite", "Indoor", "Geometry", "VectorTiles", "TestSupport",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdTesting", package: "hummingbird"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
        ]),
        // The PostGIS store against a throwaway PostgreSQL 15 + PostGIS 3 cluster (TestSupport/PostgresCluster.swift).
        .testTarget(name: "PostGISTests", dependencies: ["Support", "PostGIS", "Vltava", "Server", "VltavaCLI", "Engine", "QueryLanguage", "Store", "Geometry", "TestSupport", "Live"]),

        // The library's example app (Examples/AirQualityServer) is a package of its own, as an
        // app's backend would be; its library and its test are built here too, so that `swift
        // test` runs them without building Vltava and Hummingbird a second time.
        .target(
            name: "AirQuality",
            dependencies: ["Vltava", .product(name: "Hummingbird", package: "hummingbird")],
            path: "Examples/AirQualityServer/Sources/AirQuality"
        ),
        .testTarget(
            name: "AirQualityTests",
            dependencies: ["AirQuality", "TestSupport", .product(name: "HummingbirdTesting", package: "hummingbird")],
            path: "Examples/AirQualityServer/Tests/AirQualityTests"
        ),
    ]
)
