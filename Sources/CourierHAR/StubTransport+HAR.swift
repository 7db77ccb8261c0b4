import Courier
import CourierTesting
import Foundation

extension StubTransport {
    /// A stub transport that answers from `archive`: each attempt gets the response of the
    /// first entry with the same method and URL (and, with `matchingBodies`, the same request
    /// body) that has not answered yet, else of the last such entry. Use it to run tests
    /// offline against traffic a ``HARRecorder`` recorded once, on either platform.
    ///
    /// An attempt that matches no entry fails with `URLError(.resourceUnavailable)` whose
    /// message names its method and URL.
    ///
    /// - Parameters:
    ///   - archive: The recorded traffic.
    ///   - matchingBodies: Whether a request's body must equal the recorded one too.
    public convenience init(replaying archive: HARArchive, matchingBodies: Bool = false) {
        self.init(unmatched: .failure(URLError(.resourceUnavailable)))
        let replay = HARReplay(entries: archive.log.entries, matchingBodies: matchingBodies)
        respond { request in replay.response(for: request) }
    }
}

/// Which entries have answered.
///
/// `@unchecked Sendable`: `used` is read and written only under `lock`.
private final class HARReplay: @unchecked Sendable {
    private let entries: [HARArchive.Entry]
    private let matchingBodies: Bool
    private let lock = NSLock()
    private var used = Set<Int>()

    init(entries: [HARArchive.Entry], matchingBodies: Bool) {
        self.entries = entries
        self.matchingBodies = matchingBodies
    }

    func response(for request: URLRequest) -> StubResponse {
        let method = request.httpMethod ?? "GET"
        let url = request.url?.absoluteString ?? ""
        let candidates = entries.indices.filter { index in
            let recorded = entries[index].request
            guard recorded.method == method, recorded.url == url else { return false }
            return !matchingBodies || (recorded.postData?.data ?? Data()) == (request.httpBody ?? Data())
        }
        let chosen = lock.withLock { () -> Int? in
            guard let index = candidates.first(where: { !used.contains($0) }) ?? candidates.last else { return nil }
            used.insert(index)
            return index
        }
        guard let chosen else {
            let description = "no recorded response for \(method) \(url)"
            return .failure(URLError(.resourceUnavailable, userInfo: [NSLocalizedDescriptionKey: description]))
        }
        let response = entries[chosen].response
        var headers = HTTPHeaders()
        for header in response.headers { headers.add(name: header.name, value: header.value) }
        return StubResponse().head(statusCode: response.status, headers: headers).body(response.content.data ?? Data())
    }
}
