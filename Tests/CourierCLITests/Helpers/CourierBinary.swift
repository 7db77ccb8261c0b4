import CourierTestSupport
import Foundation
import Testing

/// Finds the `courier` executable that `swift test` built beside this test bundle.
///
/// The test target depends on the `courier` target, so the binary sits in the same build products
/// folder as the test bundle: on Linux the bundle is `CourierPackageTests.xctest` in that folder;
/// on macOS the test runner lives deeper inside the bundle. `COURIER_BINARY` overrides the search.
enum CourierBinary {
    /// The binary's URL, or `nil` with the places searched.
    static let location: Result<URL, LookupError> = find()

    /// The binary's URL; records an issue naming the places searched when it is missing.
    static func url() throws -> URL {
        switch location {
        case .success(let url): return url
        case .failure(let error): throw error
        }
    }

    /// Why the binary was not found.
    struct LookupError: Error, CustomStringConvertible {
        let searched: [String]
        var description: String {
            "the courier binary was not found (build it with `swift build --product courier`); looked in: "
                + searched.joined(separator: ", ")
        }
    }

    private static func find() -> Result<URL, LookupError> {
        let manager = FileManager.default
        if let override = ProcessInfo.processInfo.environment["COURIER_BINARY"] {
            return manager.isExecutableFile(atPath: override)
                ? .success(URL(fileURLWithPath: override)) : .failure(LookupError(searched: [override]))
        }
        let (url, searched) = builtExecutable(named: "courier")
        return url.map { .success($0) } ?? .failure(LookupError(searched: searched))
    }
}
