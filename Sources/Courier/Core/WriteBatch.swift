import Foundation

// @unchecked Sendable: `pieces` is touched only under the download's `transfer` lock.
/// Pieces of a download's body waiting, together, for one block on the file queue. They stay
/// separate: joining them would copy every byte once more.
final class WriteBatch: @unchecked Sendable {
    var pieces: [Data]

    init(_ piece: Data) {
        self.pieces = [piece]
    }
}
