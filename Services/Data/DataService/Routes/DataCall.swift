import DataEngine
import Foundation
import Hummingbird
import InternalProtocol
import NIOCore
import ServiceRuntime

/// Reading a forwarded data request: identity, path parameters, query string and JSON body.
extension PublicCall {
    /// The `:table` path parameter.
    var table: String { parameters["table"] ?? "" }

    /// The query string's pairs; malformed percent-encoding is the data API's 1016.
    var dataQueryItems: [(name: String, value: String)] {
        get throws {
            do {
                return try queryItems
            } catch let error as ErrorEnvelope {
                throw DataError.invalidParameter(error.message)
            }
        }
    }

    /// The query string as data-query parameters.
    var queryParameters: QueryParameters {
        get throws { QueryParameters(queryItems: try dataQueryItems) }
    }

    /// The body as JSON; an empty body is nil.
    var json: JSONValue? {
        get throws {
            let bytes = Array(body.readableBytesView)
            guard bytes.contains(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) else { return nil }
            do {
                return try JSONParser.parse(bytes)
            } catch {
                throw DataError.invalidBody(error.message)
            }
        }
    }

    /// The body as one JSON object.
    var object: JSONObject {
        get throws {
            guard let object = try json?.object else { throw DataError.invalidBody("The body must be a JSON object") }
            return object
        }
    }

    /// The body as a JSON array of objects.
    var objects: [JSONObject] {
        get throws { try Self.objects(in: try json) }
    }

    /// `body` (already parsed) as a JSON array of objects.
    static func objects(in body: JSONValue?) throws -> [JSONObject] {
        guard let items = body?.array else { throw DataError.invalidBody("The body must be a JSON array") }
        return try items.map { item in
            guard let object = item.object else { throw DataError.invalidBody("Every array item must be an object") }
            return object
        }
    }
}

extension Response {
    /// A JSON value response.
    static func json(_ value: JSONValue) -> Response {
        jsonText(value.jsonText)
    }

    /// A JSON array of already-encoded objects.
    static func jsonArray(_ items: [String]) -> Response {
        jsonText("[" + items.joined(separator: ",") + "]")
    }
}
