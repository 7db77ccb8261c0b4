import Foundation

/// Timing and size of one attempt of a request, with the same fields on every transport and platform.
///
/// A field a transport cannot know is `nil`, never invented: URLSession on Linux, for example,
/// does not tell the remote address.
public struct RequestMetrics: Sendable, Hashable {
    /// When the attempt started (the transport was asked to send it).
    public var startDate: Date
    /// When the attempt ended, with the last body byte or the error.
    public var endDate: Date
    /// Seconds from ``startDate`` until the response head arrived, or `nil` if none did.
    public var timeToFirstByte: TimeInterval?
    /// Request body bytes sent, or `nil` if the transport cannot tell.
    public var bytesSent: Int64?
    /// Response body bytes received (as delivered, after any decompression).
    public var bytesReceived: Int64
    /// The response's status code, or `nil` if no response arrived.
    public var statusCode: Int?
    /// The server's IP address and port, e.g. `127.0.0.1:8080`, where the transport knows it.
    public var remoteAddress: String?
    /// The protocol used, as ALPN names it (`http/1.1`, `h2`), where the transport knows it.
    public var networkProtocolName: String?
    /// Where the response came from: the network (the default), Courier's ``HTTPCache``, or
    /// the cache after a revalidation.
    public var responseSource: ResponseSource = .network

    /// Creates metrics; transports fill them in as an attempt runs.
    public init(
        startDate: Date,
        endDate: Date,
        timeToFirstByte: TimeInterval? = nil,
        bytesSent: Int64? = nil,
        bytesReceived: Int64 = 0,
        statusCode: Int? = nil,
        remoteAddress: String? = nil,
        networkProtocolName: String? = nil
    ) {
        self.startDate = startDate
        self.endDate = endDate
        self.timeToFirstByte = timeToFirstByte
        self.bytesSent = bytesSent
        self.bytesReceived = bytesReceived
        self.statusCode = statusCode
        self.remoteAddress = remoteAddress
        self.networkProtocolName = networkProtocolName
    }

    /// Seconds from start to end.
    public var duration: TimeInterval {
        endDate.timeIntervalSince(startDate)
    }
}
