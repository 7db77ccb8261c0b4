import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Turns a finished download into a value: implement it to read a file in place (parse it as a
/// stream, hand its URL on) instead of reading it into memory.
///
/// Every ``ResponseSerializer`` (and every ``DataResponseSerializerProtocol`` that declares
/// this one too) is one already: it reads the file into memory and serializes it
/// as a body. ``URLResponseSerializer`` (`.url`) gives the file's URL.
public protocol DownloadResponseSerializerProtocol<SerializedObject>: Sendable {
    /// The value produced.
    associatedtype SerializedObject: Sendable

    /// Produces the value from the downloaded file at `fileURL`. `error` is the request's error,
    /// if it failed; serializers rethrow it.
    func serializeDownload(
        request: URLRequest?,
        response: HTTPURLResponse?,
        fileURL: URL?,
        error: CourierError?
    ) throws -> SerializedObject

    /// The same, given the response as a ``ResponseHead``: what Courier calls. Implement it too
    /// when the status and headers are all you read, so that no `HTTPURLResponse` is built for
    /// you. By default it builds one and calls the form above.
    func serializeDownload(
        request: URLRequest?,
        head: ResponseHead?,
        fileURL: URL?,
        error: CourierError?
    ) throws -> SerializedObject
}

extension DownloadResponseSerializerProtocol {
    /// Builds the head's `HTTPURLResponse` and calls
    /// ``serializeDownload(request:response:fileURL:error:)``.
    public func serializeDownload(
        request: URLRequest?,
        head: ResponseHead?,
        fileURL: URL?,
        error: CourierError?
    ) throws -> SerializedObject {
        try serializeDownload(request: request, response: head?.httpURLResponse, fileURL: fileURL, error: error)
    }
}

extension DownloadResponseSerializerProtocol where Self: DataResponseSerializerProtocol {
    /// Reads the file into memory and serializes it as the body.
    ///
    /// - Throws: the request's `error`; ``CourierError/SerializationFailureReason/inputFileNil``
    ///   without a file; ``CourierError/SerializationFailureReason/inputFileReadFailed(at:)``
    ///   when it cannot be read; else what ``serialize(request:response:data:error:)`` throws.
    public func serializeDownload(
        request: URLRequest?,
        response: HTTPURLResponse?,
        fileURL: URL?,
        error: CourierError?
    ) throws -> SerializedObject {
        try serialize(
            request: request,
            response: response,
            data: Self.contents(of: fileURL, error: error),
            error: error
        )
    }

    /// Reads the file into memory and serializes it as the body, reading the response as a
    /// ``ResponseHead`` (``serialize(request:head:data:error:)``).
    public func serializeDownload(
        request: URLRequest?,
        head: ResponseHead?,
        fileURL: URL?,
        error: CourierError?
    ) throws -> SerializedObject {
        try serialize(request: request, head: head, data: Self.contents(of: fileURL, error: error), error: error)
    }

    /// The file's bytes; rethrows the request's error.
    private static func contents(of fileURL: URL?, error: CourierError?) throws -> Data {
        if let error { throw error }
        guard let fileURL else { throw CourierError.responseSerializationFailed(.inputFileNil) }
        do {
            return try Data(contentsOf: fileURL)
        } catch {
            throw CourierError.responseSerializationFailed(.inputFileReadFailed(at: fileURL))
        }
    }
}

/// The downloaded file's URL (at its destination), or the request's error.
public struct URLResponseSerializer: DownloadResponseSerializerProtocol {
    /// Creates the serializer.
    public init() {}

    /// Serializes the download; see the type for the rules it follows.
    public func serializeDownload(
        request: URLRequest?,
        response: HTTPURLResponse?,
        fileURL: URL?,
        error: CourierError?
    ) throws -> URL {
        try url(fileURL, error: error)
    }

    /// The file's URL; reads nothing of the response, so no `HTTPURLResponse` is built.
    public func serializeDownload(
        request: URLRequest?,
        head: ResponseHead?,
        fileURL: URL?,
        error: CourierError?
    ) throws -> URL {
        try url(fileURL, error: error)
    }

    private func url(_ fileURL: URL?, error: CourierError?) throws -> URL {
        if let error { throw error }
        guard let fileURL else { throw CourierError.responseSerializationFailed(.inputFileNil) }
        return fileURL
    }
}

extension DownloadResponseSerializerProtocol where Self == URLResponseSerializer {
    /// A ``URLResponseSerializer``: `download.response(responseSerializer: .url) { … }`.
    public static var url: URLResponseSerializer { URLResponseSerializer() }
}
