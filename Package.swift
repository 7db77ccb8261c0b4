// swift-tools-version:6.1
import PackageDescription

// Dependencies point inward: `Courier` needs only Foundation (and the system's zlib) so an app can
// use it without SwiftNIO;
// `CourierNIO` adds the AsyncHTTPClient transport; the test server and the CLI sit on top.
let package = Package(
    name: "Courier",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "Courier", targets: ["Courier"]),
        .library(name: "CourierNIO", targets: ["CourierNIO"]),
        .library(name: "CourierTestServer", targets: ["CourierTestServer"]),
        .library(name: "CourierTesting", targets: ["CourierTesting"]),
        .library(name: "CourierCombine", targets: ["CourierCombine"]),
        .library(name: "CourierObservability", targets: ["CourierObservability"]),
        .library(name: "CourierHAR", targets: ["CourierHAR"]),
        .executable(name: "courier", targets: ["courier"]),
        .executable(name: "courier-bench", targets: ["courier-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        // One atomic word in each request's lock (see `Lock.isMarked`); swift-nio depends on it too.
        .package(url: "https://github.com/apple/swift-atomics.git", from: "1.3.0"),
        // `swift package generate-documentation`: the DocC catalogs under Sources/*/*.docc.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        // Combine's API on Linux, for `CourierCombine` only; Apple platforms use Combine itself.
        .package(url: "https://github.com/OpenCombine/OpenCombine.git", from: "0.14.0"),
        // Certificates made on the fly for the test server (`TestCertificateAuthority`): a CA,
        // leaves valid, expired or for another name, client certificates.
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        // Logs and metrics of every request, for `CourierObservability` only.
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
    ],
    targets: [
        // MD5 and the SHA-2 hashes Digest authentication and the test server need, in the standard
        // library alone; no product, so it stays an implementation detail of this package.
        .target(name: "CourierHashes"),
        // zlib (a system library on every platform Courier runs on) compresses request bodies for
        // `DeflateRequestCompressor`; the test server inflates them and compresses its responses.
        .target(
            name: "Courier",
            dependencies: [
                "CourierHashes", "CCourierZlib", .product(name: "Atomics", package: "swift-atomics"),
            ]
        ),
        .target(
            name: "CourierNIO",
            dependencies: [
                "Courier",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                // Already in AsyncHTTPClient's graph; named here to map TLS failures to URLError codes,
                // and to read a server's certificates again (`ServerCertificateProbe`).
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                // Body pieces reach Courier as Data sharing the ByteBuffer's storage, not a copy of it.
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                // Already in AsyncHTTPClient's graph; named here to map decompression failures.
                .product(name: "NIOHTTPCompression", package: "swift-nio-extras"),
                // Rebuilds the chain a server's certificate was accepted through, so that pins can
                // match its intermediates and root (`CertificateChain`): BoringSSL's chain is not
                // visible through AsyncHTTPClient.
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
        // A transport that plays scripted responses, for tests without sockets (ours and users').
        // No SwiftNIO, like `Courier`: a user's tests need none for it.
        .target(name: "CourierTesting", dependencies: ["Courier"]),
        // Alamofire's Combine publishers, in a library of their own so that `Courier` needs no
        // Combine: Apple's Combine on Apple platforms, OpenCombine on Linux.
        .target(
            name: "CourierCombine",
            dependencies: [
                "Courier",
                .product(
                    name: "OpenCombine",
                    package: "OpenCombine",
                    condition: .when(platforms: [.linux, .android, .windows])
                ),
            ]
        ),
        // swift-log, swift-metrics and swift-distributed-tracing event monitors, in a library of
        // their own so that an app that wants none pays nothing: `Courier` depends on none.
        .target(
            name: "CourierObservability",
            dependencies: [
                "Courier",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        // HTTP Archives: recorded from a session by an event monitor, replayed by a stub
        // transport in tests. Foundation only.
        .target(name: "CourierHAR", dependencies: ["Courier", "CourierTesting"]),
        .systemLibrary(name: "CCourierZlib"),
        .target(
            name: "CourierTestServer",
            dependencies: [
                "CCourierZlib",
                "CourierHashes",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
        .executableTarget(
            name: "courier",
            dependencies: [
                "Courier",
                "CourierHAR",
                "CourierNIO",
                "CourierTestServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                // `--transport nio` configures redirects through AsyncHTTPClient's configuration.
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
        .executableTarget(
            name: "courier-bench",
            dependencies: [
                "Courier",
                "CourierNIO",
                // `courier-ahc-observed`: what the three monitors cost.
                "CourierObservability",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                "CourierTestServer",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // What the test targets share (a port that refuses connections, a bounded wait, a round
        // of the idle watch).
        .target(name: "CourierTestSupport", dependencies: ["Courier"], path: "Tests/CourierTestSupport"),
        .testTarget(
            name: "CourierTests",
            dependencies: [
                "CourierTestSupport",
                "Courier",
                "CourierCombine",
                "CourierHashes",
                "CourierNIO",
                "CourierObservability",
                "CourierHAR",
                "CourierTesting",
                "CourierTestServer",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                // To check Courier's reading of certificates against swift-certificates'.
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
        .testTarget(
            name: "CourierTestingTests",
            dependencies: [
                "CourierTestSupport",
                "Courier",
                "CourierTesting",
                // Run as a separate program by a test: it links `Courier` without `CourierNIO`.
                "courier-default-transport-check",
            ]
        ),
        .testTarget(
            name: "CourierNIOTests",
            dependencies: [
                "CourierTestSupport",
                "Courier",
                "CourierNIO",
                "CourierTestServer",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                // Certificates no test authority would issue, for the chain builder's bounds.
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ]
        ),
        // Prints the type of `Session()`'s transport in a program that links `Courier` alone, for
        // `CourierTestingTests` to check that the default there is URLSession.
        .executableTarget(
            name: "courier-default-transport-check",
            dependencies: ["Courier"],
            path: "Tests/courier-default-transport-check"
        ),
        .testTarget(
            name: "CourierCLITests",
            dependencies: [
                // Unit tests import the executable's module; integration tests run its binary,
                // which this dependency makes `swift test` build first.
                "courier",
                "Courier",
                "CourierTestServer",
                "CourierTestSupport",
            ]
        ),
        .testTarget(name: "CourierHashesTests", dependencies: ["CourierHashes"]),
        .testTarget(
            name: "CourierTestServerTests",
            dependencies: [
                "CourierTestServer",
                "CourierHashes",
                "CourierTestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                // To write OCSP requests and read the responder's answers.
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
