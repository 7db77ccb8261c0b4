import Foundation
import Testing

/// `courier serve` stays as it was, behind the client's own argument parsing.
@Suite struct ServeCommandTests {
    @Test func servesUntilTerminated() async throws {
        let server = try RunningCourier(["serve", "--port", "0"])
        let listening = await RunningCourier.poll(timeout: 15) { server.outputSoFar.contains("listening on http://") }
        #expect(listening, "stdout: \(server.outputSoFar) stderr: \(server.errorSoFar)")
        let line = server.outputSoFar.split(separator: "\n").first { $0.contains("listening on ") } ?? ""
        let base = line.split(separator: " ").first { $0.hasPrefix("http://") }.map(String.init) ?? ""
        if listening {
            let get = try await CourierRun.run(["\(base)/get", "a==1"])
            #expect(try jsonObject(get.stdout)["args"] as? [String: String] == ["a": "1"])
        }
        server.terminate()
        let run = await server.wait(timeout: 15)
        if run == nil { server.kill() }
        #expect(run?.status == 0)
        #expect(run?.output.hasSuffix("stopped\n") == true)
    }

    @Test func badOptionsExitTwoWithItsUsage() async throws {
        let run = try await CourierRun.run(["serve", "--bogus"])
        #expect(run.status == 2)
        #expect(run.errorOutput.contains("Usage: courier serve"))
    }
}
