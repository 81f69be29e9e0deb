// swift-tools-version:6.2
import Foundation
import PackageDescription

/// Settings every target shares: Swift 6 language mode comes with the tools version; these add
/// the upcoming features the style guide asks for.
let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

/// The seven services: library directory name and executable name.
let services: [(name: String, executable: String)] = [
    ("Gateway", "gateway"), ("Users", "users-service"), ("Data", "data-service"),
    ("Relations", "relations-service"), ("Messaging", "messaging-service"),
    ("Files", "files-service"), ("Geo", "geo-service"),
]

/// Shared engines a service library uses beyond the runtime.
let engines: [String: [Target.Dependency]] = [
    "Data": ["QueryLanguage", "DataEngine", "Permissions", "DataAPI"],
    // Relation columns and their links, over the same engine and request helpers as data-service.
    "Relations": ["QueryLanguage", "DataEngine", "Permissions", "DataAPI"],
    // Refuses what the permission model denies for every row before routing; relays WebSockets.
    // Sends downloads from files-service's local store itself when it can read it.
    "Gateway": [
        "Permissions", product("NIOWebSocket", "swift-nio"), product("_NIOFileSystem", "swift-nio"),
        product("DequeModule", "swift-collections"),
    ],
    // Profiles are rows of the app's Users table, written in the same transaction as credentials.
    "Users": [
        "QueryLanguage", "DataEngine", product("HummingbirdBcrypt", "hummingbird-auth"),
        product("NIOPosix", "swift-nio"),
    ],
    // SMTP delivery over NIO with STARTTLS.
    // Push credentials' keys and the JWTs they sign: swift-crypto (Crypto comes with the runtime);
    // the push providers over AsyncHTTPClient (HTTP/2 to APNs).
    "Messaging": [
        "QueryLanguage", "DataEngine", "DataAPI", "Permissions", product("NIOPosix", "swift-nio"),
        product("NIOSSL", "swift-nio-ssl"),
        product("_CryptoExtras", "swift-crypto"), product("AsyncHTTPClient", "async-http-client"),
        product("NIOHTTP1", "swift-nio"),
        // Real-time connection and subscription gauges; sessions' queues.
        product("Metrics", "swift-metrics"), product("DequeModule", "swift-collections"),
    ],
    // Stored bytes on local disk (unnamed temporary files linked into place once complete) or
    // in S3-compatible storage over HTTP; uploads from URLs resolve their host first; directories
    // and files are containers and assets of the shared permission model.
    // Image sizes are made by libvips (Debian's libvips-dev); QuickBlox file fields write
    // FILE_REF columns through the shared engine.
    "Files": [
        "Permissions", "CVips", "DataEngine", "QueryLanguage", product("_NIOFileSystem", "swift-nio"),
        product("AsyncHTTPClient", "async-http-client"),
        product("NIOHTTP1", "swift-nio"), product("NIOPosix", "swift-nio"),
    ],
    // Where clauses over point metadata through the shared parser; SQL building and JSON from
    // the data engine.
    "Geo": ["QueryLanguage", "DataEngine", "DataAPI", "Permissions"],
]

func product(_ name: String, _ package: String) -> Target.Dependency {
    .product(name: name, package: package)
}

/// `dependencies` without repeats: a product named twice (by a service's engines and by the
/// products every test imports) makes SwiftPM warn.
func distinct(_ dependencies: [Target.Dependency]) -> [Target.Dependency] {
    var seen = Set<String>()
    return dependencies.filter { seen.insert(String(describing: $0)).inserted }
}

/// What a service's test target needs beyond its library, its engines and ``testProducts``.
let testExtras: [String: [Target.Dependency]] = [
    "Data": [product("PropertyBased", "swift-property-based")],
    "Relations": [product("PropertyBased", "swift-property-based")],
    "Files": [product("PropertyBased", "swift-property-based"), "StreamTestSupport"],
    "Geo": [product("PropertyBased", "swift-property-based")],
    "Gateway": [product("NIOEmbedded", "swift-nio"), "StreamTestSupport"],
]

/// Files a service's test target reads at run time.
let testResources: [String: [Resource]] = [
    // A decompression bomb (a PNG that declares 20,000 × 20,000 pixels in 48 KiB).
    "Files": [.copy("Fixtures")]
]

/// Products every service library imports directly.
let serviceProducts: [Target.Dependency] = [
    product("Hummingbird", "hummingbird"), product("PostgresNIO", "postgres-nio"),
    product("Logging", "swift-log"), product("NIOCore", "swift-nio"),
    product("Configuration", "swift-configuration"), product("Crypto", "swift-crypto"),
    product("ServiceLifecycle", "swift-service-lifecycle"),
]

/// Tests keep `ExistentialAny` but not `MemberImportVisibility`, whose import lists would
/// drown the assertions.
let testSettings: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")]

/// Products the test targets import directly.
let testProducts: [Target.Dependency] =
    serviceProducts + [
        "InternalProtocol", "PostgresSupport", "ServiceRuntime", "TestSupport",
        product("AsyncHTTPClient", "async-http-client"), product("NIOSSL", "swift-nio-ssl"),
        product("X509", "swift-certificates"), product("NIOPosix", "swift-nio"), product("NIOHTTP1", "swift-nio"),
        product("NIOFoundationCompat", "swift-nio"),
    ]

var targets: [Target] = [
    .target(name: "InternalProtocol", path: "Shared/InternalProtocol", swiftSettings: strict),
    .target(
        name: "PostgresSupport",
        dependencies: [
            product("PostgresNIO", "postgres-nio"), product("Logging", "swift-log"),
            product("ServiceLifecycle", "swift-service-lifecycle"), product("NIOCore", "swift-nio"),
        ],
        path: "Shared/PostgresSupport", swiftSettings: strict),
    .target(
        name: "ServiceRuntime",
        dependencies: [
            "InternalProtocol", "PostgresSupport",
            product("Hummingbird", "hummingbird"), product("HummingbirdHTTP2", "hummingbird"),
            product("AsyncHTTPClient", "async-http-client"),
            product("PostgresNIO", "postgres-nio"),
            product("ServiceLifecycle", "swift-service-lifecycle"),
            product("Configuration", "swift-configuration"),
            product("Logging", "swift-log"), product("Metrics", "swift-metrics"),
            product("Prometheus", "swift-prometheus"),
            product("X509", "swift-certificates"), product("Crypto", "swift-crypto"),
            product("SwiftASN1", "swift-asn1"),
            product("NIOCore", "swift-nio"), product("NIOPosix", "swift-nio"),
            product("NIOConcurrencyHelpers", "swift-nio"),
            product("NIOSSL", "swift-nio-ssl"), product("NIOHTTP2", "swift-nio-http2"),
            product("NIOTLS", "swift-nio"), product("NIOHTTP1", "swift-nio"),
            product("NIOFoundationCompat", "swift-nio"), product("HummingbirdCore", "hummingbird"),
            product("UnixSignals", "swift-service-lifecycle"), product("NIOHTTPTypes", "swift-nio-extras"),
            // WebSocket upgrades on the public port and the socket streams behind them.
            product("NIOWebSocket", "swift-nio"), product("NIOHTTPTypesHTTP1", "swift-nio-extras"),
            product("AsyncAlgorithms", "swift-async-algorithms"), product("DequeModule", "swift-collections"),
        ],
        path: "Shared/ServiceRuntime", swiftSettings: strict),
    .target(name: "QueryLanguage", path: "Shared/QueryLanguage", swiftSettings: strict),
    // libvips through its headers; pkg-config names only GObject (the include paths vips.h
    // needs) because libvips's own flags carry `-pthread`, which SwiftPM drops with a warning.
    .systemLibrary(
        name: "CVips", path: "Services/Files/CVips", pkgConfig: "gobject-2.0", providers: [.apt(["libvips-dev"])]),
    // The security model shared by the data engine and the gateway (and the containers of
    // files, messaging and geo): cells, the nine-layer oracle, its row-independent plan.
    .target(name: "Permissions", dependencies: ["InternalProtocol"], path: "Shared/Permissions", swiftSettings: strict),
    .target(
        name: "DataEngine",
        dependencies: [
            "QueryLanguage", "PostgresSupport", "InternalProtocol", "Permissions",
            product("PostgresNIO", "postgres-nio"), product("Logging", "swift-log"),
            product("Metrics", "swift-metrics"), product("NIOCore", "swift-nio"),
            product("NIOFoundationCompat", "swift-nio"), product("ServiceLifecycle", "swift-service-lifecycle"),
        ],
        path: "Shared/DataEngine", swiftSettings: strict),
    // Reading data requests (query parameters, JSON bodies) the way data- and relations-service share.
    .target(
        name: "DataAPI",
        dependencies: [
            "DataEngine", "ServiceRuntime", "InternalProtocol", "Permissions", product("Hummingbird", "hummingbird"),
            product("NIOCore", "swift-nio"),
        ],
        path: "Shared/DataAPI", swiftSettings: strict),
    .testTarget(
        name: "QueryLanguageTests", dependencies: ["QueryLanguage"],
        path: "Tests/QueryLanguageTests", swiftSettings: testSettings),
    .target(
        name: "TestSupport",
        dependencies: [
            "ServiceRuntime", "PostgresSupport", "InternalProtocol", "DataEngine", "Permissions",
            product("PropertyBased", "swift-property-based"), product("AsyncHTTPClient", "async-http-client"),
            product("X509", "swift-certificates"), product("NIOPosix", "swift-nio"),
            product("NIOHTTP1", "swift-nio"), product("NIOFoundationCompat", "swift-nio"),
            product("NIOWebSocket", "swift-nio"),
        ] + services.map { .target(name: "\($0.name)Service") } + serviceProducts,
        path: "Tests/TestSupport", swiftSettings: testSettings),
    .testTarget(
        name: "ServiceRuntimeTests", dependencies: testProducts + ["Permissions"],
        path: "Tests/ServiceRuntimeTests", swiftSettings: testSettings),
    // A backend with streamed and socket routes that exists only for tests, and the process
    // that runs it in files-service's place for the benchmark's large-body case.
    .target(
        name: "StreamTestSupport",
        dependencies: [
            "ServiceRuntime", "InternalProtocol", "PostgresSupport", product("Crypto", "swift-crypto"),
            product("Hummingbird", "hummingbird"), product("NIOCore", "swift-nio"),
        ],
        path: "Tests/StreamTestSupport", swiftSettings: testSettings),
    .executableTarget(
        name: "stream-test-service", dependencies: ["StreamTestSupport", "ServiceRuntime"],
        path: "Tests/StreamTestServer", swiftSettings: testSettings),
    // The benchmark's single-process floor of GET by id (Benchmarks/README.md).
    .executableTarget(
        name: "bench-floor",
        dependencies: [
            product("Hummingbird", "hummingbird"), product("PostgresNIO", "postgres-nio"),
            product("Logging", "swift-log"),
        ],
        path: "Benchmarks/Floor", swiftSettings: strict),
    // A client apple/swift-openapi-generator made from the published description's operations
    // (Deploy/generate-openapi-client.sh; the test checks the description still matches).
    .testTarget(
        name: "GeneratedClientTests",
        dependencies: testProducts + [
            product("OpenAPIRuntime", "swift-openapi-runtime"),
            product("OpenAPIAsyncHTTPClient", "swift-openapi-async-http-client"),
        ],
        path: "Tests/GeneratedClientTests",
        exclude: ["openapi.json", "openapi-generator-config.yaml", "operations.txt"], swiftSettings: testSettings),
    .testTarget(
        name: "EndToEndTests",
        dependencies: services.map { .target(name: "\($0.name)Service") } + testProducts,
        path: "Tests/EndToEndTests", swiftSettings: testSettings),
]

for service in services {
    let library = "\(service.name)Service"
    targets += [
        .target(
            name: library,
            dependencies: ["ServiceRuntime", "InternalProtocol", "PostgresSupport"] + engines[service.name, default: []]
                + serviceProducts,
            path: "Services/\(service.name)/\(library)", swiftSettings: strict),
        .executableTarget(
            name: service.executable,
            dependencies: [
                .target(name: library), "ServiceRuntime", "InternalProtocol", product("Logging", "swift-log"),
                product("Configuration", "swift-configuration"),
            ],
            path: "Services/\(service.name)/Main", swiftSettings: strict),
        .testTarget(
            name: "\(service.name)Tests",
            dependencies: distinct(
                [.target(name: library)] + engines[service.name, default: []] + testProducts
                    + testExtras[service.name, default: []]),
            path: "Tests/\(service.name)Tests", resources: testResources[service.name], swiftSettings: testSettings),
    ]
}

/// Fuzz mode (`BAAS_FUZZ` set, as `Fuzz/run.sh` does): the libFuzzer executable `fuzz` and
/// coverage instrumentation of the modules whose parsers it drives. Normal builds never see either.
if ProcessInfo.processInfo.environment["BAAS_FUZZ"] != nil {
    // Dependencies stay uninstrumented: coverage of NIO would only dilute the parsers' signal. The
    // address sanitizer watches the pointer code (the multipart scanner's memchr and memcmp).
    let instrumented: Set<String> = ["QueryLanguage", "DataEngine", "FilesService", "MessagingService"]
    let sanitize: [SwiftSetting] = [.unsafeFlags(["-sanitize=fuzzer,address"])]
    for target in targets where instrumented.contains(target.name) {
        target.swiftSettings = (target.swiftSettings ?? []) + sanitize
    }
    targets.append(
        .executableTarget(
            name: "fuzz",
            dependencies: [
                "QueryLanguage", "DataEngine", "FilesService", "MessagingService", "InternalProtocol",
                product("NIOCore", "swift-nio"),
            ],
            path: "Fuzz/Targets",
            // `@_extern(c)` declares libFuzzer's driver, which has no header to import.
            swiftSettings: strict + sanitize + [.enableExperimentalFeature("Extern")],
            // lld, since gold warns about every symbol of the address sanitizer's runtime.
            linkerSettings: [.unsafeFlags(["-sanitize=fuzzer,address", "-use-ld=lld"])]))
}

let package = Package(
    name: "Platform",
    platforms: [.macOS(.v15)],
    products: services.map { .executable(name: $0.executable, targets: [$0.executable]) },
    dependencies: [
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", exact: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", exact: "2.5.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", exact: "1.37.0"),
        .package(url: "https://github.com/vapor/postgres-nio.git", exact: "1.33.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", exact: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", exact: "2.4.1"),
        .package(url: "https://github.com/apple/swift-configuration.git", exact: "1.4.0"),
        .package(url: "https://github.com/apple/swift-log.git", exact: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", exact: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-async-algorithms.git", from: "1.1.4"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", exact: "1.21.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.3.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", exact: "2.0.1"),
        .package(url: "https://github.com/apple/swift-openapi-runtime.git", exact: "1.13.4"),
        .package(url: "https://github.com/swift-server/swift-openapi-async-http-client.git", exact: "1.5.0"),
    ],
    targets: targets,
    swiftLanguageModes: [.v6]
)
