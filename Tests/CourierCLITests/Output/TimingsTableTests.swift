import Courier
import Foundation
import Testing

@testable import courier

@Suite struct TimingsTableTests {
    @Test func oneRowPerAttemptWithDashesForUnknowns() {
        let start = Date(timeIntervalSince1970: 0)
        let table = TimingsTable.render([
            RequestMetrics(startDate: start, endDate: start.addingTimeInterval(0.25), statusCode: 503),
            RequestMetrics(
                startDate: start,
                endDate: start.addingTimeInterval(0.5),
                timeToFirstByte: 0.125,
                bytesSent: 10,
                bytesReceived: 2048,
                statusCode: 200,
                remoteAddress: "127.0.0.1:80",
                networkProtocolName: "h2"
            ),
        ])
        let lines = table.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines[0].hasPrefix("attempt  status  first byte"))
        #expect(lines[1].hasPrefix("1        503     –           250.0 ms"))
        #expect(lines[2].contains("125.0 ms"))
        #expect(lines[2].hasSuffix("2.0 KiB   h2        127.0.0.1:80"))
    }
}
