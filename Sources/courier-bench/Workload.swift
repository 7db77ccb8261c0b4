import Foundation

/// What a benchmark run does. Request workloads are measured in requests a second, transfer
/// workloads in MB a second.
enum Workload: String, CaseIterable, Codable, Sendable {
    /// GETs of a 1 KiB body, one at a time: the cost of one request.
    case sequential
    /// GETs of a 1 KiB body, many in flight: the cost under load, and how well it spreads.
    case concurrent
    /// GETs of a 64 KiB JSON array (160 records), each decoded into `Decodable` structs.
    case decode
    /// GET a body of `size` bytes and write it to a file on disk.
    case download
    /// POST a file of `size` bytes, streamed from disk.
    case upload
    /// POST a `multipart/form-data` body holding a file of `size` bytes.
    case multipart
    /// GET a body of `size` bytes and consume it piece by piece as it arrives, keeping none.
    case stream

    /// Whether the run is many small requests (requests/s) rather than one large body (MB/s).
    var isRequestWorkload: Bool {
        switch self {
        case .sequential, .concurrent, .decode: return true
        case .download, .upload, .multipart, .stream: return false
        }
    }

    /// The sizes: 1 GiB to download, 256 MiB for the rest; 0 for request workloads.
    var defaultSize: Int64 {
        switch self {
        case .download: return 1 << 30
        case .upload, .multipart, .stream: return 256 << 20
        case .sequential, .concurrent, .decode: return 0
        }
    }

    /// How many requests a request workload sends by default; 1 for transfers.
    var defaultRequests: Int {
        switch self {
        case .sequential, .decode: return 5_000
        case .concurrent: return 20_000
        case .download, .upload, .multipart, .stream: return 1
        }
    }

    /// How many requests are in flight at once by default.
    var defaultConcurrency: Int {
        self == .concurrent ? 64 : 1
    }
}

/// Who runs a workload: a raw transport, or Courier over it.
enum Client: String, CaseIterable, Codable, Sendable {
    case rawAsyncHTTPClient = "raw-ahc"
    case courierAsyncHTTPClient = "courier-ahc"
    case rawURLSession = "raw-urlsession"
    case courierURLSession = "courier-urlsession"
    /// Courier over AsyncHTTPClient with `CourierObservability`'s three monitors doing all their
    /// work (the `.info` line built, every metric recorded, every span made and its
    /// `traceparent` sent), into backends that drop it: what the monitors themselves cost. Run
    /// only when named.
    case observedCourierAsyncHTTPClient = "courier-ahc-observed"

    /// The clients a run measures when none is named.
    static let defaults: [Client] = [.rawAsyncHTTPClient, .courierAsyncHTTPClient, .rawURLSession, .courierURLSession]

    /// The raw client Courier over the same transport is compared with.
    var baseline: Client? {
        switch self {
        case .courierAsyncHTTPClient, .observedCourierAsyncHTTPClient: return .rawAsyncHTTPClient
        case .courierURLSession: return .rawURLSession
        case .rawAsyncHTTPClient, .rawURLSession: return nil
        }
    }
}

/// What one child process measured for one run.
struct Measurement: Codable, Sendable {
    var client: Client
    var workload: Workload
    /// Requests sent (1 for a transfer workload).
    var requests: Int
    /// Response (or, for uploads, request) body bytes moved.
    var bytes: Int64
    /// Wall-clock seconds of the work itself (the multipart encoding included).
    var seconds: Double
    /// User plus system CPU seconds the child spent during the work.
    var cpuSeconds: Double
    /// Context switches of the child's threads during the work.
    var contextSwitches: Int
    /// Peak resident memory of the child process, in bytes.
    var peakResidentBytes: Int64

    var megabytesPerSecond: Double { seconds > 0 ? Double(bytes) / 1_048_576 / seconds : 0 }
    var requestsPerSecond: Double { seconds > 0 ? Double(requests) / seconds : 0 }
    /// The figure the workload is judged by: requests/s or MB/s.
    var rate: Double { workload.isRequestWorkload ? requestsPerSecond : megabytesPerSecond }
    /// Context switches per request, or per transfer.
    var switchesPerRequest: Double { Double(contextSwitches) / Double(max(requests, 1)) }
}
