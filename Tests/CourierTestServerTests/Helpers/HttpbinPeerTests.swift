import Foundation
import Testing

/// The comparison tests compare only when `HTTPBIN_URL` is set; in CI it must be, or every
/// comparison would silently vanish.
@Suite struct HttpbinPeerTests {
    @Test func ciProvidesARunningHttpbin() async throws {
        guard ProcessInfo.processInfo.environment["CI"] != nil else { return }
        let httpbin = try #require(Httpbin.url, "CI must export HTTPBIN_URL (see .ci/run)")
        let answer = try await Exchange.make(httpbin, "/get")
        #expect(answer.status == 200)
        #expect(answer.json?["url"]?.stringValue?.hasSuffix("/get") == true)
    }
}
