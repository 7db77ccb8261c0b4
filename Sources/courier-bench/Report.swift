import Foundation

/// The table for one workload: per client the median and range of its rate (requests/s or MB/s),
/// CPU seconds, context switches and peak memory, then Courier's ratio to the raw client on the same transport.
struct Report {
    let workload: Workload
    let measurements: [Measurement]

    func table() -> String {
        let unit = workload.isRequestWorkload ? "requests/s" : "MB/s"
        var lines = [
            "| client | \(unit) median (min–max) | CPU s median | switches/request median | peak RSS MiB max "
                + "| Courier / raw (\(unit)) |",
            "|---|---|---|---|---|---|",
        ]
        for client in Client.allCases {
            let runs = measurements.filter { $0.client == client }
            guard !runs.isEmpty else { continue }
            let rates = runs.map(\.rate).sorted()
            let cpu = Self.median(runs.map(\.cpuSeconds))
            let switches = Self.median(runs.map(\.switchesPerRequest))
            let peak = (runs.map(\.peakResidentBytes).max() ?? 0) >> 20
            let ratio = ratio(of: client).map { String(format: "%.2f×", $0) } ?? ""
            lines.append(
                "| \(client.rawValue) | "
                    + String(format: "%.0f (%.0f–%.0f)", Self.median(rates), rates.first ?? 0, rates.last ?? 0)
                    + " | " + String(format: "%.2f", cpu) + " | " + String(format: "%.2f", switches)
                    + " | \(peak) | \(ratio) |"
            )
        }
        return lines.joined(separator: "\n")
    }

    /// One client's figures for the workload, as the JSON output gives them.
    struct Summary: Codable {
        var workload: Workload
        var client: Client
        var unit: String
        var medianRate: Double
        var minimumRate: Double
        var maximumRate: Double
        var medianCPUSeconds: Double
        /// Context switches per request (per transfer for a transfer workload), median.
        var medianSwitchesPerRequest: Double
        var peakResidentBytes: Int64
        /// Courier's median rate over the raw transport's, on Courier's rows.
        var ratioToRaw: Double?
    }

    func summaries() -> [Summary] {
        Client.allCases.compactMap { client in
            let runs = measurements.filter { $0.client == client }
            guard !runs.isEmpty else { return nil }
            let rates = runs.map(\.rate).sorted()
            return Summary(
                workload: workload,
                client: client,
                unit: workload.isRequestWorkload ? "requests/s" : "MB/s",
                medianRate: Self.median(rates),
                minimumRate: rates.first ?? 0,
                maximumRate: rates.last ?? 0,
                medianCPUSeconds: Self.median(runs.map(\.cpuSeconds)),
                medianSwitchesPerRequest: Self.median(runs.map(\.switchesPerRequest)),
                peakResidentBytes: runs.map(\.peakResidentBytes).max() ?? 0,
                ratioToRaw: ratio(of: client)
            )
        }
    }

    /// Median rate of Courier over a transport divided by the raw transport's, if both ran.
    func ratio(of client: Client) -> Double? {
        guard let baseline = client.baseline else { return nil }
        let courier = Self.median(measurements.filter { $0.client == client }.map(\.rate))
        let raw = Self.median(measurements.filter { $0.client == baseline }.map(\.rate))
        return raw > 0 && courier > 0 ? courier / raw : nil
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}
