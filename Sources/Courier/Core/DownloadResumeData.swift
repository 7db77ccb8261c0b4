import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What Courier needs to continue an interrupted download: where it came from, how far it got,
/// where the partial file is, and how to tell whether the server's file is still the same.
///
/// ``DownloadRequest/resumeData`` holds one encoded as JSON; pass those bytes to
/// ``Session/download(resumingWith:interceptor:shouldAutomaticallyResume:to:)``, in this process or another. The format
/// is Courier's own, the same on every transport and platform (unlike URLSession's), and
/// versioned: a newer Courier reads older versions, and data of a version it does not know
/// fails with ``CourierError/Kind/invalidResumeData``.
///
/// Version 1 is a JSON object:
///
/// | key | meaning |
/// |---|---|
/// | `format` | always `"courier.download-resume-data"` |
/// | `version` | `1` |
/// | `url` | the URL of the last attempt |
/// | `method`, `headers` | the request's method and headers, without `Authorization`, `Cookie` and `Proxy-Authorization` (interceptors add credentials again) |
/// | `bytesReceived` | how many bytes of the body the partial file holds |
/// | `temporaryFilePath` | the partial file |
/// | `entityTag`, `lastModified` | the response's `ETag` and `Last-Modified`, sent back as `If-Range` |
/// | `expectedLength` | the full body's length, when the server said |
///
/// Without an `entityTag` or `lastModified`, a resumed download starts over: resuming without
/// `If-Range` could splice two versions of a file together.
public struct DownloadResumeData: Codable, Sendable, Equatable {
    /// The format name written in every resume data.
    public static let formatName = "courier.download-resume-data"
    /// The version this Courier writes.
    public static let currentVersion = 1

    /// The format name; ``formatName``.
    public var format: String
    /// The format's version.
    public var version: Int
    /// The URL the download continues from.
    public var url: URL
    /// The request's method.
    public var method: String
    /// The request's headers, credentials left out.
    public var headers: [String: String]
    /// The bytes already in ``temporaryFilePath``.
    public var bytesReceived: Int64
    /// The partial file.
    public var temporaryFilePath: String
    /// The response's `ETag`, if it had one.
    public var entityTag: String?
    /// The response's `Last-Modified`, if it had one.
    public var lastModified: String?
    /// The whole body's length, if known.
    public var expectedLength: Int64?

    /// Resume data for `request`, with `bytesReceived` bytes in the file at `temporaryFilePath`.
    public init(
        request: URLRequest,
        bytesReceived: Int64,
        temporaryFilePath: String,
        entityTag: String?,
        lastModified: String?,
        expectedLength: Int64?
    ) throws {
        guard let url = request.url else { throw CourierError.invalidResumeData(Problem("the request has no URL")) }
        self.format = Self.formatName
        self.version = Self.currentVersion
        self.url = url
        self.method = request.httpMethod ?? "GET"
        self.headers = (request.allHTTPHeaderFields ?? [:]).filter { name, _ in
            !Self.credentialHeaders.contains(name.lowercased())
        }
        self.bytesReceived = bytesReceived
        self.temporaryFilePath = temporaryFilePath
        self.entityTag = entityTag
        self.lastModified = lastModified
        self.expectedLength = expectedLength
    }

    /// Decodes resume data made by ``encoded()``.
    ///
    /// - Throws: ``CourierError/Kind/invalidResumeData`` when `data` is not Courier resume data, is
    ///   of an unknown version, or names no partial file that still exists.
    public init(data: Data) throws {
        let decoded: DownloadResumeData
        do {
            decoded = try JSONDecoder().decode(DownloadResumeData.self, from: data)
        } catch {
            throw CourierError.invalidResumeData(Problem("it is not Courier resume data (\(error))"))
        }
        guard decoded.format == Self.formatName else {
            throw CourierError.invalidResumeData(Problem("its format is \"\(decoded.format)\""))
        }
        guard decoded.version >= 1, decoded.version <= Self.currentVersion else {
            throw CourierError.invalidResumeData(Problem("its version \(decoded.version) is unknown to this Courier"))
        }
        guard decoded.bytesReceived >= 0 else {
            throw CourierError.invalidResumeData(Problem("its byte count is negative"))
        }
        // Only a file Courier made for a download: resume data read from disk must not be able to
        // point a download at any file the process may write.
        // The folder itself, not only its name: a folder of that name elsewhere is not Courier's.
        let partial = URL(fileURLWithPath: decoded.temporaryFilePath)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(DownloadFile.folderName)
        guard partial.pathExtension == "download",
            partial.deletingLastPathComponent().standardizedFileURL.path == folder.standardizedFileURL.path
        else {
            throw CourierError.invalidResumeData(Problem("its partial file is not one Courier made for a download"))
        }
        guard FileManager.default.fileExists(atPath: decoded.temporaryFilePath) else {
            throw CourierError.invalidResumeData(
                Problem("its partial file \(decoded.temporaryFilePath) no longer exists")
            )
        }
        self = decoded
    }

    /// The JSON bytes to store or pass to ``Session/download(resumingWith:interceptor:shouldAutomaticallyResume:to:)``.
    public func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? encoder.encode(self)) ?? Data()
    }

    /// The request to send again (before adding the `Range`).
    var urlRequest: URLRequest {
        var request = URLRequest(url: url)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        return request
    }

    private static let credentialHeaders: Set<String> = ["authorization", "cookie", "proxy-authorization"]

    /// Why resume data was refused.
    struct Problem: LocalizedError, CustomStringConvertible {
        let description: String
        var errorDescription: String? { description }

        init(_ description: String) {
            self.description = description
        }
    }
}
