/// Why an argument cannot be used as a request item, or why the items cannot make one request;
/// `courier` reports it as a usage error (exit 2).
struct RequestItemError: Error, Equatable, CustomStringConvertible {
    /// The argument as typed, or the items in conflict.
    let item: String
    /// What is wrong with it, in words.
    let reason: String

    var description: String { "invalid item '\(item)': \(reason)" }
}
