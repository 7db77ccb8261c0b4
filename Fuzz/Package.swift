// swift-tools-version:6.1
import PackageDescription

// libFuzzer targets for Courier's parsers of untrusted input, kept out of the main package so
// `swift build` and `swift test` there never see them. Build and run them with `scripts/fuzz`:
// every module is compiled with `-sanitize=fuzzer` (given on the command line, `-Xswiftc`, so
// the parsers themselves carry the coverage instrumentation).
//
// The test server's body parsers are compiled here from symbolic links to their files in
// Sources/CourierTestServer/Support (they use nothing but the standard library, libc and
// `CourierHashes`, which the `Courier` product brings along):
// depending on the `CourierTestServer` product instead would build SwiftNIO and BoringSSL with
// the instrumentation too, about ten minutes more on two cores for nothing fuzzed.
let fuzzTargets = [
    "FuzzHeaderBlock",
    "FuzzContentDisposition",
    "FuzzRetryAfter",
    "FuzzContentRange",
    "FuzzMIMEType",
    "FuzzMultipart",
    "FuzzResumeData",
    "FuzzURLEncodedForm",
    "FuzzJSONLines",
    "FuzzAuthenticationChallenge",
    "FuzzSetCookie",
    "FuzzCacheControl",
    "FuzzCertificate",
]

let package = Package(
    name: "CourierFuzz",
    dependencies: [
        .package(name: "Courier", path: "..")
    ],
    targets: [
        .target(name: "CLibFuzzer"),
        .target(name: "FuzzSupport", dependencies: ["CLibFuzzer"]),
        .target(
            name: "CourierTestServerParsers",
            dependencies: [.product(name: "Courier", package: "Courier")]
        ),
    ]
        + fuzzTargets.map { name in
            .executableTarget(
                name: name,
                dependencies: [
                    "FuzzSupport",
                    .product(name: "Courier", package: "Courier"),
                    "CourierTestServerParsers",
                ]
            )
        },
    swiftLanguageModes: [.v6]
)
