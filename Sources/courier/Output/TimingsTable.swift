import Courier
import Foundation

/// `--timings`: each attempt's ``RequestMetrics`` as a table, for a person to read.
enum TimingsTable {
    /// The table, one row per attempt, with a header row; fields the transport does not know show `–`.
    static func render(_ metrics: [RequestMetrics]) -> String {
        var rows = [["attempt", "status", "first byte", "total", "sent", "received", "protocol", "address"]]
        for (index, attempt) in metrics.enumerated() {
            rows.append([
                "\(index + 1)",
                attempt.statusCode.map(String.init) ?? "–",
                attempt.timeToFirstByte.map(milliseconds) ?? "–",
                milliseconds(attempt.duration),
                attempt.bytesSent.map(ByteCount.format) ?? "–",
                ByteCount.format(attempt.bytesReceived),
                attempt.networkProtocolName ?? "–",
                attempt.remoteAddress ?? "–",
            ])
        }
        let widths = (0..<rows[0].count).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            zip(row, widths).map { cell, width in cell.padding(toLength: width, withPad: " ", startingAt: 0) }
                .joined(separator: "  ").trimmingCharacters(in: .whitespaces)
        }.joined(separator: "\n") + "\n"
    }

    private static func milliseconds(_ seconds: TimeInterval) -> String {
        String(format: "%.1f ms", seconds * 1000)
    }
}
