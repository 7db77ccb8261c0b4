import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Writes a response on stdout as `--print` selects: the head, then the body, raw and as it
/// arrives when stdout is redirected (byte for byte), or whole and formatted on a terminal.
struct ResponsePrinter {
    /// A terminal body larger than this is not kept: it is counted and reported as too large to show.
    static let largestShownBody = 16 << 20

    /// What to print.
    let selection: PrintSelection
    /// Where to print it.
    let terminal: Terminal
    private var printedHead = false
    private var contentType: String?
    private var kept: [UInt8] = []
    private var bodyBytes = 0
    private var isBinary = false
    private var isTooLarge = false
    private var startedRawBody = false

    init(selection: PrintSelection, terminal: Terminal) {
        self.selection = selection
        self.terminal = terminal
    }

    /// Prints the head when selected and remembers the content type for the body.
    mutating func head(_ response: HTTPURLResponse, protocolName: String?) {
        contentType = response.value(forHTTPHeaderField: "Content-Type")
        guard selection.contains(.responseHeaders) else { return }
        terminal.output(
            HeadFormatter(style: terminal.outputStyle).responseHead(
                statusCode: response.statusCode,
                protocolName: protocolName,
                headers: HeadFormatter.headers(of: response)
            )
        )
        printedHead = true
    }

    /// Takes the next piece of the body.
    mutating func body(_ piece: Data) {
        guard selection.contains(.responseBody), !piece.isEmpty else { return }
        bodyBytes += piece.count
        guard terminal.stdoutIsTerminal else {
            if printedHead, !startedRawBody { terminal.output("\n") }
            startedRawBody = true
            terminal.output(bytes: piece)
            return
        }
        guard !isBinary, !isTooLarge else { return }
        if piece.contains(0) || bodyBytes > Self.largestShownBody {
            isBinary = piece.contains(0)
            isTooLarge = !isBinary
            kept = []
            return
        }
        kept.append(contentsOf: piece)
    }

    /// Ends the output: on a terminal, the body formatted (or a note for binary data).
    mutating func finish() {
        guard selection.contains(.responseBody), terminal.stdoutIsTerminal, bodyBytes > 0 else { return }
        let style = terminal.outputStyle
        if printedHead { terminal.output("\n") }
        if isTooLarge {
            let note = "\(bodyBytes) bytes, too large to show here: redirect the output to a file, or use --download"
            terminal.output(style.paint(note, .faint) + "\n")
            return
        }
        let display =
            isBinary
            ? BodyDisplay.binary(byteCount: bodyBytes)
            : BodyDisplay.classify(kept, contentType: contentType, style: style)
        terminal.output(display.rendered(style: style))
    }
}
