import Courier
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a ``StubTransport`` answers to one attempt: a script of steps played in order.
///
/// Build one from a starting point (``status(_:headers:body:)``, ``failure(_:)``, ``hanging``)
/// and append steps with the methods below; each returns a new response, so a script reads in
/// the order it plays:
///
/// ```swift
/// let response = StubResponse.status(200, headers: ["Content-Type": "application/json"])
///     .delay(.milliseconds(5))
///     .body(#"{"id":1}"#)
/// ```
///
/// When the steps run out, the attempt completes successfully; a ``fail(with:)`` step completes
/// it with that error instead (steps after it never play). Steps are delivered exactly as
/// written, so a script can also break the transport contract (a body before any head, two
/// heads) to test how code copes. If the request has a body of known length and the script has
/// no ``uploadProgress(sent:of:)`` step, one step reporting the whole body sent plays first.
public struct StubResponse: Sendable {
    /// One step of a script.
    enum Step: Sendable {
        case head(statusCode: Int, fields: [(name: String, value: String)], httpVersion: String)
        case body(Data)
        case uploadProgress(sent: Int64, expected: Int64?)
        case delay(Duration)
        case gate(StubGate)
        /// Waits until the task is cancelled.
        case hang
        case failure(URLError)
    }

    /// The steps, in the order they play.
    private(set) var steps: [Step]

    /// An empty script: the attempt completes successfully with no response head at all
    /// (something no real transport does; see ``status(_:headers:body:)`` for a response).
    public init() {
        steps = []
    }

    private init(steps: [Step]) {
        self.steps = steps
    }

    /// A response with `statusCode`, `headers` and, when not empty, `body` in one piece.
    ///
    /// - Parameters:
    ///   - statusCode: The status code, such as 200 or 503.
    ///   - headers: The response's header fields, in order.
    ///   - body: The response body; nothing is delivered for an empty one.
    public static func status(_ statusCode: Int, headers: HTTPHeaders = [:], body: Data = Data()) -> StubResponse {
        let response = StubResponse().head(statusCode: statusCode, headers: headers)
        return body.isEmpty ? response : response.body(body)
    }

    /// An attempt that fails with `error` before any response arrives, as a refused connection
    /// (`URLError(.cannotConnectToHost)`) or a timeout (`URLError(.timedOut)`) does.
    public static func failure(_ error: URLError) -> StubResponse {
        StubResponse().fail(with: error)
    }

    /// An attempt that never answers: it completes (with `URLError(.cancelled)`) only when cancelled.
    public static var hanging: StubResponse {
        StubResponse(steps: [.hang])
    }

    /// Appends a response head.
    ///
    /// - Parameters:
    ///   - statusCode: The status code.
    ///   - headers: The header fields, in order.
    ///   - httpVersion: The version as `HTTPURLResponse` names it; `HTTP/1.1` by default.
    public func head(statusCode: Int, headers: HTTPHeaders = [:], httpVersion: String = "HTTP/1.1") -> StubResponse {
        head(statusCode: statusCode, headerFields: headers.map { ($0.name, $0.value) }, httpVersion: httpVersion)
    }

    /// Appends a response head whose fields may repeat a name (several `Set-Cookie` fields),
    /// which ``Courier/HTTPHeaders`` cannot hold.
    ///
    /// - Parameters:
    ///   - statusCode: The status code.
    ///   - headerFields: The header fields, in order; a name may repeat.
    ///   - httpVersion: The version as `HTTPURLResponse` names it; `HTTP/1.1` by default.
    public func head(
        statusCode: Int,
        headerFields: [(name: String, value: String)],
        httpVersion: String = "HTTP/1.1"
    ) -> StubResponse {
        appending(.head(statusCode: statusCode, fields: headerFields, httpVersion: httpVersion))
    }

    /// Appends a piece of the response body; several calls deliver several pieces.
    public func body(_ data: Data) -> StubResponse {
        appending(.body(data))
    }

    /// Appends a piece of the response body: `text` in UTF-8.
    public func body(_ text: String) -> StubResponse {
        appending(.body(Data(text.utf8)))
    }

    /// Appends an upload progress report: `sent` bytes of the request body sent so far, of
    /// `expected` (`nil` when the length is unknown).
    public func uploadProgress(sent: Int64, of expected: Int64?) -> StubResponse {
        appending(.uploadProgress(sent: sent, expected: expected))
    }

    /// Appends a pause of `duration` before the next step (a suspended task pauses longer: it
    /// continues only once resumed).
    public func delay(_ duration: Duration) -> StubResponse {
        appending(.delay(duration))
    }

    /// Appends a wait at `gate`: the next step plays only once the gate is open.
    public func wait(for gate: StubGate) -> StubResponse {
        appending(.gate(gate))
    }

    /// Appends a wait that only cancelling the task ends: the attempt then completes with
    /// `URLError(.cancelled)`, and later steps never play.
    public func hang() -> StubResponse {
        appending(.hang)
    }

    /// Appends the end of the attempt with `error`; steps appended after it never play.
    public func fail(with error: URLError) -> StubResponse {
        appending(.failure(error))
    }

    private func appending(_ step: Step) -> StubResponse {
        var copy = self
        copy.steps.append(step)
        return copy
    }
}
