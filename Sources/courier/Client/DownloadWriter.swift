import Foundation

/// Writes a download's body into its output file as it arrives, and draws its progress.
struct DownloadWriter {
    /// The output file.
    let path: String
    private let handle: FileHandle
    /// Bytes in the file now.
    private(set) var bytes: Int64
    /// Bytes in the file before this run.
    private let initialBytes: Int64
    private var bar: ProgressBar?
    private let terminal: Terminal
    /// Whether the body belongs in the file (not for a `416` that says the file is complete).
    private let keepsBody: Bool

    /// Opens `path` to write from `offset`: from the start (creating or emptying the file) when
    /// `offset` is 0, else after the bytes kept.
    ///
    /// - Throws: When the file cannot be created or opened.
    init(path: String, offset: Int64, total: Int64?, showsBar: Bool, terminal: Terminal, keepsBody: Bool = true) throws
    {
        let manager = FileManager.default
        if offset == 0 || !manager.fileExists(atPath: path) {
            guard manager.createFile(atPath: path, contents: nil) else {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: path])
            }
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        if keepsBody {
            try handle.truncate(atOffset: UInt64(offset))
            try handle.seek(toOffset: UInt64(offset))
        }
        self.path = path
        self.handle = handle
        self.bytes = offset
        self.initialBytes = offset
        self.terminal = terminal
        self.keepsBody = keepsBody
        self.bar = showsBar ? ProgressBar(initialBytes: offset, totalBytes: total, style: terminal.errorStyle) : nil
    }

    /// Appends `piece` and redraws the bar when it is due.
    mutating func write(_ piece: Data, elapsed: Double) throws {
        guard keepsBody else { return }
        try handle.write(contentsOf: piece)
        bytes += Int64(piece.count)
        if let frame = bar?.frame(bytes: bytes, elapsed: elapsed) {
            terminal.error("\r" + frame + "\u{1B}[K")
        }
    }

    /// Closes the file after a failure, leaving what arrived for `--continue`.
    func close(terminal: Terminal) {
        if bar != nil { terminal.error("\r\u{1B}[K") }
        try? handle.close()
    }

    /// Closes the file and prints the summary line.
    func finish(elapsed: Double, terminal: Terminal) {
        if let bar {
            terminal.error("\r" + bar.render(bytes: bytes, elapsed: elapsed) + "\u{1B}[K\n")
        }
        try? handle.close()
        guard keepsBody else { return }
        terminal.error(
            ProgressBar.summary(bytes: bytes, transferred: bytes - initialBytes, elapsed: elapsed, path: path) + "\n"
        )
    }
}
