import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Puts an `Encodable` parameters value into a `URLRequest`: in its query, or as its body.
///
/// Courier ships ``URLEncodedFormParameterEncoder`` and ``JSONParameterEncoder``; conform your own
/// type to send parameters another way.
public protocol ParameterEncoder: Sendable {
    /// Returns `request` with `parameters` encoded into it.
    ///
    /// - Throws: A ``CourierError`` of kind ``CourierError/Kind/parameterEncodingFailed`` when the
    ///   parameters cannot be encoded.
    func encode<Parameters: Encodable & Sendable>(
        _ parameters: Parameters?,
        into request: URLRequest
    ) throws
        -> URLRequest
}

/// Encodes parameters as `application/x-www-form-urlencoded`, in the URL's query or in the body.
///
/// ```swift
/// session.request(url, parameters: ["q": "swift", "lang": "en"], encoder: URLEncodedFormParameterEncoder.default)
/// // GET …?lang=en&q=swift
/// ```
public struct URLEncodedFormParameterEncoder: ParameterEncoder {
    /// Where the encoded parameters go.
    public enum Destination: Sendable {
        /// In the query for `GET`, `HEAD` and `DELETE`, in the body for other methods.
        case methodDependent
        /// Always in the query.
        case queryString
        /// Always in the body.
        case httpBody

        func encodesInURL(for method: HTTPMethod) -> Bool {
            switch self {
            case .methodDependent: return method.encodesParametersInURL
            case .queryString: return true
            case .httpBody: return false
            }
        }
    }

    /// An encoder with the default form encoder and a method-dependent destination.
    public static let `default` = URLEncodedFormParameterEncoder()

    /// The form encoder, whose options decide how arrays, booleans, dates and keys are written.
    public let encoder: URLEncodedFormEncoder
    /// Where the parameters go.
    public let destination: Destination

    /// Creates an encoder.
    ///
    /// - Parameters:
    ///   - encoder: How values are written; the defaults suit most servers.
    ///   - destination: Where they go; by default, decided by the method.
    public init(encoder: URLEncodedFormEncoder = URLEncodedFormEncoder(), destination: Destination = .methodDependent) {
        self.encoder = encoder
        self.destination = destination
    }

    /// Returns `request` with `parameters` in its query (appended to any query it has) or as a
    /// body, setting `Content-Type: application/x-www-form-urlencoded; charset=utf-8` unless the
    /// request already has one.
    public func encode<Parameters: Encodable & Sendable>(
        _ parameters: Parameters?,
        into request: URLRequest
    ) throws
        -> URLRequest
    {
        guard let parameters else { return request }
        guard request.url != nil else { throw CourierError.parameterEncodingFailed(Failure.missingURL) }
        let query: String
        do {
            query = try encoder.encode(parameters)
        } catch {
            throw CourierError.parameterEncodingFailed(error)
        }
        return try Self.place(query, in: request, destination: destination)
    }

    /// `request` with the encoded form `query` in its URL's query (after any it has) or as its
    /// body, as `destination` says for its method; a body gets
    /// `Content-Type: application/x-www-form-urlencoded; charset=utf-8` unless it has one.
    static func place(_ query: String, in request: URLRequest, destination: Destination) throws -> URLRequest {
        var request = request
        guard let url = request.url else { throw CourierError.parameterEncodingFailed(Failure.missingURL) }
        let method = HTTPMethod(rawValue: request.httpMethod ?? HTTPMethod.get.rawValue)
        if destination.encodesInURL(for: method) {
            guard !query.isEmpty else { return request }
            guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
                throw CourierError.parameterEncodingFailed(Failure.missingURL)
            }
            components.percentEncodedQuery = [components.percentEncodedQuery, query].compactMap { $0 }
                .filter { !$0.isEmpty }.joined(separator: "&")
            guard let newURL = components.url else { throw CourierError.parameterEncodingFailed(Failure.missingURL) }
            request.url = newURL
        } else {
            if request.value(forHTTPHeaderField: "Content-Type") == nil {
                request.setValue("application/x-www-form-urlencoded; charset=utf-8", forHTTPHeaderField: "Content-Type")
            }
            request.httpBody = Data(query.utf8)
        }
        return request
    }

    /// What can go wrong placing encoded parameters.
    public enum Failure: Error, Sendable {
        /// The request has no URL, or its URL cannot take a query.
        case missingURL
    }
}

/// Encodes parameters as a JSON body with `Content-Type: application/json`.
///
/// ```swift
/// session.request(url, method: .post, parameters: Login(user: "a", password: "b"), encoder: JSONParameterEncoder.default)
/// ```
public struct JSONParameterEncoder: ParameterEncoder {
    /// Compact JSON.
    public static let `default` = JSONParameterEncoder()
    /// Indented JSON, for reading.
    public static let prettyPrinted = JSONParameterEncoder(outputFormatting: [.prettyPrinted])
    /// JSON with keys sorted, so the same value always encodes to the same bytes.
    public static let sortedKeys = JSONParameterEncoder(outputFormatting: [.sortedKeys])

    private let makeEncoder: @Sendable () -> JSONEncoder

    /// Creates an encoder whose `JSONEncoder` is set up by `configure` (date and key strategies…).
    ///
    /// A fresh `JSONEncoder` is made for each request, because `JSONEncoder` is a mutable class.
    public init(configure: @escaping @Sendable (JSONEncoder) -> Void = { _ in }) {
        makeEncoder = {
            let encoder = JSONEncoder()
            configure(encoder)
            return encoder
        }
    }

    /// Creates an encoder with the given output formatting.
    public init(outputFormatting: JSONEncoder.OutputFormatting) {
        self.init { $0.outputFormatting = outputFormatting }
    }

    /// The `JSONEncoder` parameters are encoded with, as Alamofire's `encoder`: the one given to
    /// ``init(encoder:)``, or else a fresh one set up as configured, made for each read.
    public var encoder: JSONEncoder { makeEncoder() }

    /// Creates an encoder that encodes every request's parameters with `encoder`, as
    /// Alamofire's does. Set the encoder up before handing it over: it is shared by every request.
    public init(encoder: JSONEncoder) {
        makeEncoder = { encoder }
    }

    /// Returns `request` with `parameters` as a JSON body, setting `Content-Type: application/json`
    /// unless the request already has one.
    public func encode<Parameters: Encodable & Sendable>(
        _ parameters: Parameters?,
        into request: URLRequest
    ) throws
        -> URLRequest
    {
        guard let parameters else { return request }
        var request = request
        do {
            request.httpBody = try makeEncoder().encode(parameters)
        } catch {
            throw CourierError.parameterEncodingFailed(error)
        }
        if request.value(forHTTPHeaderField: "Content-Type") == nil {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        return request
    }
}

extension ParameterEncoder where Self == JSONParameterEncoder {
    /// ``JSONParameterEncoder/default``: `encoder: .json` where a generic encoder is expected.
    public static var json: JSONParameterEncoder { .default }

    /// A ``JSONParameterEncoder`` sharing `encoder` between requests.
    public static func json(encoder: JSONEncoder = JSONEncoder()) -> JSONParameterEncoder {
        JSONParameterEncoder(encoder: encoder)
    }
}

extension ParameterEncoder where Self == URLEncodedFormParameterEncoder {
    /// ``URLEncodedFormParameterEncoder/default``: `encoder: .urlEncodedForm` where a generic
    /// encoder is expected.
    public static var urlEncodedForm: URLEncodedFormParameterEncoder { .default }

    /// A ``URLEncodedFormParameterEncoder`` with the given form encoder and destination.
    public static func urlEncodedForm(
        encoder: URLEncodedFormEncoder = URLEncodedFormEncoder(),
        destination: URLEncodedFormParameterEncoder.Destination = .methodDependent
    ) -> URLEncodedFormParameterEncoder {
        URLEncodedFormParameterEncoder(encoder: encoder, destination: destination)
    }
}
