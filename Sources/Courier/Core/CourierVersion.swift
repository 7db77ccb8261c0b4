/// The version of the Courier library.
///
/// Use it in a `User-Agent` or in diagnostics. The request API arrives with the core issue;
/// until then the `Courier` module holds only this.
public enum CourierVersion {
    /// The version string, in semantic-versioning form.
    public static let current = "0.1.0-dev"
}
