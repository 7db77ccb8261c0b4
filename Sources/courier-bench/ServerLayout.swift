import Foundation

/// Where each workload's resources are on the server a run talks to, and how an upload is sent.
///
/// The embedded test server makes its bodies on request (`/range/:n`, `/records/:n`, `/upload`).
/// A plain static file server such as nginx cannot, so the static layout names files that
/// `courier-bench --write-files DIR` writes, and sends uploads as `PUT`s that a WebDAV location
/// stores (nginx's `dav_methods PUT`), because a static server answers a `POST` to a file with
/// 405 and a location that answers at once (`return 204`) replies before it has read the body,
/// so the upload would not be measured.
enum ServerLayout: String, CaseIterable, Codable, Sendable {
    /// The embedded test server's routes: `courier-bench --serve`, or `TestServer` anywhere.
    case testServer = "test-server"
    /// Static files under the server's URL, and `PUT` uploads to `upload/body.bin`.
    case files

    /// The body of `sequential` and `concurrent`: 1 KiB.
    static let smallBodySize = 1_024
    /// The records in the `decode` workload's JSON array.
    static let recordCount = 160

    /// The 1 KiB body of `sequential` and `concurrent`.
    func smallBody(on server: URL) -> URL {
        switch self {
        case .testServer: return server.appendingPathComponent("range/\(Self.smallBodySize)")
        case .files: return server.appendingPathComponent(Self.smallBodyFile)
        }
    }

    /// The JSON array of ``recordCount`` records for `decode`.
    func records(on server: URL) -> URL {
        switch self {
        case .testServer: return server.appendingPathComponent("records/\(Self.recordCount)")
        case .files: return server.appendingPathComponent(Self.recordsFile)
        }
    }

    /// A body of `size` bytes for `download` and `stream`; the test server's in 1 MiB chunks, so
    /// the server is not what is measured.
    func body(of size: Int64, on server: URL) -> URL {
        switch self {
        case .testServer:
            return server.appendingPathComponent("range/\(size)").appending(queryItems: [
                URLQueryItem(name: "chunk_size", value: "1048576")
            ])
        case .files: return server.appendingPathComponent(Self.bodyFile(of: size))
        }
    }

    /// Where `upload` and `multipart` send their body.
    func upload(on server: URL) -> URL {
        switch self {
        case .testServer:
            return server.appendingPathComponent("upload").appending(queryItems: [
                URLQueryItem(name: "hash", value: "false")
            ])
        case .files: return server.appendingPathComponent(Self.uploadFile)
        }
    }

    /// The upload's method: the test server answers a `POST` with a receipt; a WebDAV location
    /// stores a `PUT` and answers 201 or 204 with no body.
    var uploadMethod: String {
        self == .testServer ? "POST" : "PUT"
    }

    /// Whether the server answers an upload with a ``ClientRun/Receipt`` counting the bytes it read.
    var answersUploadWithReceipt: Bool { self == .testServer }

    static let smallBodyFile = "small-\(smallBodySize).bin"
    static let recordsFile = "records-\(recordCount).json"
    /// The folder that must exist (and accept `PUT`) for uploads.
    static let uploadFolder = "upload"
    static let uploadFile = "\(uploadFolder)/body.bin"

    static func bodyFile(of size: Int64) -> String { "body-\(size).bin" }
}
