import DataEngine
import Hummingbird
import InternalProtocol
import ServiceRuntime

/// Reading a geo request: its JSON body and its search, refused with geo's codes.
extension PublicCall {
    /// The body as JSON; an empty body is nil (4002 when it is not JSON).
    var geoJSON: JSONValue? {
        get throws(ErrorEnvelope) {
            guard let bytes = nonBlankBody else { return nil }
            do {
                return try JSONParser.parse(bytes, maximumDepth: 16)
            } catch {
                throw GeoError.invalidBody("The body is not valid JSON: \(error.message)")
            }
        }
    }

    /// The search the query string names.
    func geoSearch(rectangle: Bool = false) throws(ErrorEnvelope) -> GeoSearch {
        let items: [(name: String, value: String)]
        do {
            items = try queryItems
        } catch {
            throw GeoError.invalidParameter("Malformed percent-encoding in the query string")
        }
        return try GeoSearch(query: items, rectangle: rectangle)
    }
}

extension Response {
    /// A JSON value response.
    static func geo(_ value: JSONValue) -> Response {
        jsonText(value.jsonText)
    }
}
