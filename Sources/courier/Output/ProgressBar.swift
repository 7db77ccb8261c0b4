/// The download progress line drawn on stderr: bytes so far, the percentage and a bar when the
/// length is known, the speed and the time left, redrawn at most ten times a second.
///
/// A plain value fed with byte counts and times, so what it draws is tested without a terminal.
struct ProgressBar: Sendable {
    /// The shortest time between two frames, in seconds.
    static let minimumRedrawInterval = 0.1
    /// How many cells the bar has.
    static let barWidth = 24

    /// Bytes already in the file before this run (a resumed download), which count towards the
    /// percentage but not the speed.
    let initialBytes: Int64
    /// The whole file's length, when the server said.
    let totalBytes: Int64?
    /// The colours to draw with.
    let style: TerminalStyle
    /// When the last frame was drawn, in the caller's clock's seconds.
    private var lastFrameTime: Double?

    init(initialBytes: Int64 = 0, totalBytes: Int64?, style: TerminalStyle) {
        self.initialBytes = initialBytes
        self.totalBytes = totalBytes
        self.style = style
    }

    /// The frame to draw now, or `nil` when the last one is under ``minimumRedrawInterval`` old.
    ///
    /// - Parameters:
    ///   - bytes: Bytes the file holds now (resumed bytes included).
    ///   - elapsed: Seconds since this run's transfer started.
    mutating func frame(bytes: Int64, elapsed: Double) -> String? {
        if let lastFrameTime, elapsed - lastFrameTime < Self.minimumRedrawInterval { return nil }
        lastFrameTime = elapsed
        return render(bytes: bytes, elapsed: elapsed)
    }

    /// The progress line for `bytes` after `elapsed` seconds, without throttling.
    func render(bytes: Int64, elapsed: Double) -> String {
        let transferred = max(bytes - initialBytes, 0)
        let speed = ByteCount.rate(bytes: transferred, seconds: elapsed)
        guard let totalBytes, totalBytes > 0 else {
            return "\(ByteCount.format(bytes))  \(speed)"
        }
        let fraction = min(max(Double(bytes) / Double(totalBytes), 0), 1)
        let filled = Int((fraction * Double(Self.barWidth)).rounded(.down))
        let bar =
            style.paint(String(repeating: "█", count: filled), .success)
            + style.paint(String(repeating: "░", count: Self.barWidth - filled), .faint)
        let percent = Int((fraction * 100).rounded(.down))
        var line = "\(percent < 10 ? "  " : percent < 100 ? " " : "")\(percent)% \(bar) "
        line += "\(ByteCount.format(bytes)) / \(ByteCount.format(totalBytes))  \(speed)"
        if transferred > 0, elapsed > 0, bytes < totalBytes {
            let secondsLeft = Double(totalBytes - bytes) / (Double(transferred) / elapsed)
            line += "  ETA \(ByteCount.duration(secondsLeft))"
        }
        return line
    }

    /// The line that ends a download: what was saved, where, how fast.
    static func summary(bytes: Int64, transferred: Int64, elapsed: Double, path: String) -> String {
        let resumed = bytes > transferred ? " (\(ByteCount.format(transferred)) this time)" : ""
        return "Saved \(path): \(ByteCount.format(bytes))\(resumed) in "
            + "\(String(format: "%.2f", elapsed)) s, \(ByteCount.rate(bytes: transferred, seconds: elapsed))"
    }
}
