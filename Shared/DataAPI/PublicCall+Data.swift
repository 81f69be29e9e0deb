import DataEngine
import Foundation
import Hummingbird
import InternalProtocol
import NIOCore
import Permissions
import ServiceRuntime

/// Reading a forwarded data request (data-service and relations-service): path parameters, query
/// string and JSON body, refused with the data API's codes.
extension PublicCall {
    /// The `:table` path parameter.
    package var table: String { parameters["table"] ?? "" }

    /// The query string's pairs; malformed percent-encoding is the data API's 1016.
    package var dataQueryItems: [(name: String, value: String)] {
        get throws {
            do {
                return try queryItems
            } catch let error as ErrorEnvelope {
                throw DataError.invalidParameter(error.message)
            }
        }
    }

    /// The query string as data-query parameters.
    package var queryParameters: QueryParameters {
        get throws { QueryParameters(queryItems: try dataQueryItems) }
    }

    /// The body as JSON; an empty body is nil.
    package var json: JSONValue? {
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

    /// The body as JSON nested at most `maximumDepth` deep; an empty body is nil. A body that
    /// does not parse is refused with `refusal` of the parser's reason.
    package func json(
        maximumDepth: Int, refusal: (String) -> ErrorEnvelope
    ) throws(ErrorEnvelope) -> JSONValue? {
        guard let bytes = nonBlankBody else { return nil }
        do {
            return try JSONParser.parse(bytes, maximumDepth: maximumDepth)
        } catch {
            throw refusal("The body is not valid JSON: \(error.message)")
        }
    }

    /// A POST body's data query: the JS object form or Swift's arrays and numeric strings, members
    /// named as `renaming` says (an empty body is the default query).
    package func bodyQueryParameters(renaming names: [String: String] = [:]) throws -> QueryParameters {
        guard let body = try json else { return QueryParameters() }
        guard let object = body.object else { throw DataError.invalidBody("The query body must be a JSON object") }
        return try QueryParameters(body: object, renaming: names)
    }

    /// The body as one JSON object.
    package var object: JSONObject {
        get throws {
            guard let object = try json?.object else { throw DataError.invalidBody("The body must be a JSON object") }
            return object
        }
    }

    /// The body as a JSON array of objects.
    package var objects: [JSONObject] {
        get throws { try Self.objects(in: try json) }
    }

    /// `body` (already parsed) as a JSON array of objects.
    package static func objects(in body: JSONValue?) throws -> [JSONObject] {
        guard let items = body?.array else { throw DataError.invalidBody("The body must be a JSON array") }
        return try items.map { item in
            guard let object = item.object else { throw DataError.invalidBody("Every array item must be an object") }
            return object
        }
    }
}

extension Response {
    /// A JSON value response.
    package static func json(_ value: JSONValue) -> Response {
        jsonText(value.jsonText)
    }

    /// A JSON array of already-encoded objects.
    package static func jsonArray(_ items: [String]) -> Response {
        jsonText("[" + items.joined(separator: ",") + "]")
    }
}

extension RoutePermission {
    /// The data operation a route performs on the table its `:table` parameter names.
    package static func data(_ operation: DataOperation) -> RoutePermission {
        RoutePermission(operation: operation.rawValue, containerParameter: "table", rules: .dataTables)
    }
}
