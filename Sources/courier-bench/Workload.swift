import Foundation

/// What a benchmark run moves.
enum Workload: String, CaseIterable, Codable, Sendable {
    /// GET a body of `size` bytes and write it to a file on disk.
    case download
    /// POST a file of `size` bytes, streamed from disk.
    case upload
    /// POST a `multipart/form-data` body holding a file of `size` bytes.
    case multipart

    /// The default body size: the 1 GiB download and 256 MiB uploads.
    var defaultSize: Int64 {
        switch self {
        case .download: return 1 << 30
        case .upload, .multipart: return 256 << 20
        }
    }
}

/// Who runs a workload: a raw transport, or Courier over it.
enum Client: String, CaseIterable, Codable, Sendable {
    case rawAsyncHTTPClient = "raw-ahc"
    case courierAsyncHTTPClient = "courier-ahc"
    case rawURLSession = "raw-urlsession"
    case courierURLSession = "courier-urlsession"

    /// The raw client Courier over the same transport is compared with.
    var baseline: Client? {
        switch self {
        case .courierAsyncHTTPClient: return .rawAsyncHTTPClient
        case .courierURLSession: return .rawURLSession
        case .rawAsyncHTTPClient, .rawURLSession: return nil
        }
    }
}

/// What one child process measured for one run.
struct Measurement: Codable, Sendable {
    var client: Client
    var workload: Workload
    var bytes: Int64
    /// Wall-clock seconds of the transfer itself (the multipart encoding included).
    var seconds: Double
    /// User plus system CPU seconds the child spent during the transfer.
    var cpuSeconds: Double
    /// Peak resident memory of the child process, in bytes.
    var peakResidentBytes: Int64

    var megabytesPerSecond: Double { seconds > 0 ? Double(bytes) / 1_048_576 / seconds : 0 }
}
