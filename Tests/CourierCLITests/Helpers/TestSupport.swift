import Foundation
import Testing

@testable import courier

/// The transports each transport-dependent test runs on, as `--transport` names them.
let allTransports = TransportChoice.allCases

/// The JSON object `data` holds, failing the test when it holds none.
func jsonObject(_ data: Data, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
    let object = try JSONSerialization.jsonObject(with: data)
    return try #require(object as? [String: Any], sourceLocation: sourceLocation)
}

/// `/range/:n`'s body: `a` to `z`, repeating.
func rangePattern(_ count: Int) -> Data {
    Data((0..<count).map { UInt8(ascii: "a") + UInt8($0 % 26) })
}

/// A new empty folder under the system's temporary folder, for one test's files.
func makeTemporaryFolder() throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-cli-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder
}

/// The size of the file at `url`, or 0 when it does not exist.
func fileSize(_ url: URL) -> Int {
    ((try? FileManager.default.attributesOfItem(atPath: url.path)[.size]) as? Int) ?? 0
}
