import DataAPI
import DataEngine
import Hummingbird
import InternalProtocol
import ServiceRuntime

/// Reading a geo request: its JSON body and its search, refused with geo's codes.
extension PublicCall {
    /// The body as JSON; an empty body is nil (4002 when it is not JSON).
    var geoJSON: JSONValue? {
        get throws(ErrorEnvelope) { try json(maximumDepth: 16, refusal: GeoError.invalidBody) }
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
