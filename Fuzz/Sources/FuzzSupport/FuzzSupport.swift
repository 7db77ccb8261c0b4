import CLibFuzzer
import Foundation

/// Runs libFuzzer with the process's arguments (`-max_total_time=20`, corpus folders...), calling
/// `testOneInput` with each input; returns libFuzzer's exit status. A target's `main` is just this.
public func runFuzzer(_ testOneInput: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> Never {
    var argc = CommandLine.argc
    var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
    exit(LLVMFuzzerRunDriver(&argc, &argv, testOneInput))
}

/// One libFuzzer input, read front to back: a few leading bytes may choose options (how to cut a
/// stream into chunks, a boundary's length), the rest is the text or body under test.
public struct FuzzInput {
    /// The bytes not taken yet.
    public private(set) var rest: ArraySlice<UInt8>

    /// The input libFuzzer passed to `LLVMFuzzerTestOneInput`.
    public init(_ start: UnsafePointer<UInt8>?, _ count: Int) {
        rest = start.map { Array(UnsafeBufferPointer(start: $0, count: count))[...] } ?? []
    }

    /// The next byte, or 0 once the input is used up (so short inputs still choose something).
    public mutating func takeByte() -> UInt8 {
        rest.popFirst() ?? 0
    }

    /// The next `count` bytes, or fewer if the input ends first.
    public mutating func take(_ count: Int) -> ArraySlice<UInt8> {
        let taken = rest.prefix(count)
        rest = rest.dropFirst(taken.count)
        return taken
    }

    /// The bytes not taken yet as UTF-8 text (ill-formed sequences replaced, as a transport's
    /// `String(decoding:as:)` would).
    public var restAsText: String {
        String(decoding: rest, as: UTF8.self)
    }

    /// The rest cut into chunks whose sizes (1 to `maximumChunk`) follow from `seed`: the same input
    /// always cuts the same way, and different seeds reach splits at every position.
    public func restInChunks(seed: UInt8, maximumChunk: Int) -> [ArraySlice<UInt8>] {
        var chunks: [ArraySlice<UInt8>] = []
        var state = UInt32(seed) &* 2_654_435_761 &+ 1
        var position = rest.startIndex
        while position < rest.endIndex {
            state = state &* 1_103_515_245 &+ 12_345
            let size = 1 + Int((state >> 16) % UInt32(max(1, maximumChunk)))
            let end = min(rest.endIndex, position + size)
            chunks.append(rest[position..<end])
            position = end
        }
        return chunks
    }
}

/// Stops the run with `message` when a property of the parser does not hold: libFuzzer reports
/// the abort as a crash and saves the input.
public func fuzzCheck(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition {
        FileHandle.standardError.write(Data("fuzz property failed: \(message())\n".utf8))
        abort()
    }
}
