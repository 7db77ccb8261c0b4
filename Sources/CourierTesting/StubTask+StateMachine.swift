import Courier
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension StubTask {
    /// What one stub task knows, as a value: where it is in its script, whether it is suspended,
    /// cancelled or delivering, and what its metrics will say.
    ///
    /// Each event returns an ``Action`` for the task to perform after releasing its lock; the
    /// machine does no I/O, takes no lock and reads no clock (the task passes the time in).
    /// Delivery is single-file: while one handler call is out (``isDelivering``) no event hands
    /// out another; the call's end (``delivered(now:)``) hands out the next.
    struct StateMachine: Sendable {
        /// The task's lifecycle.
        enum Lifecycle: Sendable, Equatable {
            /// Made, not resumed. `resume` → `running`; `cancel` → `completed` (with the cancellation).
            case initialized
            /// Playing its script. `suspend`/`resume` pause and continue it; `cancel`, a
            /// failure step or the end of the steps → `completed`.
            case running
            /// The completion has been handed out, exactly once: every later event does nothing.
            case completed
        }

        /// What the handler is told.
        enum Event: Sendable {
            case head(ResponseHead)
            case body(Data)
            case uploadProgress(sent: Int64, expected: Int64?)
            case completion(URLError?, RequestMetrics)
        }

        /// What the task does after an event, outside its lock.
        enum Action: Sendable {
            case none
            /// Call the handler with the event, then report ``StateMachine/delivered(now:)``.
            case deliver(Event)
            /// Report ``StateMachine/waitEnded(token:now:)`` with `token` after `duration`.
            case schedule(Duration, token: Int)
            /// Report ``StateMachine/waitEnded(token:now:)`` with `token` once `gate` opens.
            case await(StubGate, token: Int)
        }

        private(set) var lifecycle = Lifecycle.initialized
        private let url: URL
        private let steps: [StubResponse.Step]
        /// The index of the next step to play.
        private var next = 0
        /// The token of the wait (delay or gate) that step `next` is in, if one is running.
        private var pendingWait: Int?
        private var lastToken = 0
        private(set) var isSuspended = false
        /// Whether a handler call is out: no other may start until it returns.
        private(set) var isDelivering = false
        private var isCancelRequested = false
        // For the metrics.
        private var startDate: Date?
        private var headDate: Date?
        private var statusCode: Int?
        private var protocolName: String?
        private var bytesReceived: Int64 = 0
        private let bytesSent: Int64?

        /// A machine for one attempt at `url`, whose request body is `bodyLength` bytes long
        /// (`nil`: no body, or of unknown length).
        init(url: URL, response: StubResponse, bodyLength: Int64?) {
            self.url = url
            var steps = response.steps
            let reportsUpload = steps.contains {
                if case .uploadProgress = $0 { return true }
                return false
            }
            if let bodyLength, bodyLength > 0, !reportsUpload {
                steps.insert(.uploadProgress(sent: bodyLength, expected: bodyLength), at: 0)
            }
            self.steps = steps
            bytesSent = bodyLength
        }

        /// Starts the script, or continues it after `suspend`.
        mutating func resume(now: Date) -> Action {
            switch lifecycle {
            case .initialized:
                lifecycle = .running
                startDate = now
                isSuspended = false
                return advance(now: now)
            case .running:
                isSuspended = false
                return advance(now: now)
            case .completed:
                return .none
            }
        }

        /// Holds delivery from the next step on until `resume` (a handler call already out
        /// finishes). Before the first resume it is remembered, but the first resume clears it.
        mutating func suspend() {
            if lifecycle != .completed { isSuspended = true }
        }

        /// Ends the task with `URLError(.cancelled)` unless its completion was already handed
        /// out; a handler call already out finishes first.
        mutating func cancel(now: Date) -> Action {
            guard lifecycle != .completed else { return .none }
            isCancelRequested = true
            return advance(now: now)
        }

        /// A delay or gate ended; `token` names which, so a stale one does nothing.
        mutating func waitEnded(token: Int, now: Date) -> Action {
            guard lifecycle == .running, pendingWait == token else { return .none }
            pendingWait = nil
            next += 1
            return advance(now: now)
        }

        /// The handler call handed out last returned.
        mutating func delivered(now: Date) -> Action {
            isDelivering = false
            return advance(now: now)
        }

        /// What comes next, if anything may be delivered now.
        private mutating func advance(now: Date) -> Action {
            guard !isDelivering else { return .none }
            switch lifecycle {
            case .completed:
                return .none
            case .initialized:
                return isCancelRequested ? complete(with: URLError(.cancelled), now: now) : .none
            case .running:
                break
            }
            if isCancelRequested { return complete(with: URLError(.cancelled), now: now) }
            guard !isSuspended, pendingWait == nil else { return .none }
            guard next < steps.count else { return complete(with: nil, now: now) }
            let step = steps[next]
            switch step {
            case .delay(let duration):
                lastToken += 1
                pendingWait = lastToken
                return .schedule(duration, token: lastToken)
            case .gate(let gate):
                lastToken += 1
                pendingWait = lastToken
                return .await(gate, token: lastToken)
            case .hang:
                // A wait no event ends: only `cancel` completes the task.
                lastToken += 1
                pendingWait = lastToken
                return .none
            case .failure(let error):
                return complete(with: error, now: now)
            case .head(let code, let fields, let version):
                next += 1
                if headDate == nil { headDate = now }
                statusCode = code
                protocolName = Self.protocolName(forVersion: version)
                let head = ResponseHead(
                    url: url,
                    statusCode: code,
                    httpVersion: version,
                    headerFields: fields
                )
                return deliver(.head(head))
            case .body(let data):
                next += 1
                bytesReceived += Int64(data.count)
                return deliver(.body(data))
            case .uploadProgress(let sent, let expected):
                next += 1
                return deliver(.uploadProgress(sent: sent, expected: expected))
            }
        }

        private mutating func deliver(_ event: Event) -> Action {
            isDelivering = true
            return .deliver(event)
        }

        private mutating func complete(with error: URLError?, now: Date) -> Action {
            lifecycle = .completed
            let start = startDate ?? now
            let metrics = RequestMetrics(
                startDate: start,
                endDate: now,
                timeToFirstByte: headDate.map { $0.timeIntervalSince(start) },
                bytesSent: bytesSent,
                bytesReceived: bytesReceived,
                statusCode: statusCode,
                networkProtocolName: protocolName
            )
            return deliver(.completion(error, metrics))
        }

        /// The ALPN name of an `HTTPURLResponse` version string, for the metrics.
        private static func protocolName(forVersion version: String) -> String? {
            switch version.uppercased() {
            case "HTTP/1.1": return "http/1.1"
            case "HTTP/1.0": return "http/1.0"
            case "HTTP/2", "HTTP/2.0": return "h2"
            case "HTTP/3", "HTTP/3.0": return "h3"
            default: return nil
            }
        }
    }
}
