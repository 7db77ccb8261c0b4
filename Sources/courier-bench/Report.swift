import Foundation

/// The table for one workload: per client the median and range of MB/s, CPU seconds and peak
/// memory, then Courier's ratio to the raw client on the same transport.
struct Report {
    let measurements: [Measurement]

    func table() -> String {
        var lines = [
            "| client | MB/s median (min–max) | CPU s median | peak RSS MiB max | Courier / raw (MB/s) |",
            "|---|---|---|---|---|",
        ]
        for client in Client.allCases {
            let runs = measurements.filter { $0.client == client }
            guard !runs.isEmpty else { continue }
            let speeds = runs.map(\.megabytesPerSecond).sorted()
            let cpu = Self.median(runs.map(\.cpuSeconds))
            let peak = (runs.map(\.peakResidentBytes).max() ?? 0) >> 20
            var ratio = ""
            if let baseline = client.baseline {
                let raw = Self.median(measurements.filter { $0.client == baseline }.map(\.megabytesPerSecond))
                if raw > 0 { ratio = String(format: "%.2f×", Self.median(speeds) / raw) }
            }
            lines.append(
                "| \(client.rawValue) | "
                    + String(format: "%.0f (%.0f–%.0f)", Self.median(speeds), speeds.first ?? 0, speeds.last ?? 0)
                    + " | " + String(format: "%.2f", cpu) + " | \(peak) | \(ratio) |"
            )
        }
        return lines.joined(separator: "\n")
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }
}
