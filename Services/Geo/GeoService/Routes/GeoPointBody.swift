import DataEngine
import InternalProtocol

/// A point's body on save (`POST`), replace (`PUT`) and partial update (`PATCH`).
enum GeoPointBody {
    /// How a missing member reads.
    enum Mode {
        /// Save and replace: missing categories are Default, missing metadata none.
        case whole
        /// Partial update: missing or null members keep the point's values.
        case partial
    }

    /// The change `body` asks for, and the objectId it names (a save of a known point
    /// replaces it).
    static func change(_ body: JSONValue?, mode: Mode) throws(ErrorEnvelope) -> (GeoStore.Change, objectId: String?) {
        guard let object = body?.object else {
            throw GeoError.invalidBody("The body must be a JSON object describing a point")
        }
        var change = GeoStore.Change()
        switch (object["latitude"], object["longitude"], mode) {
        case (nil, nil, .partial), (.null?, .null?, .partial): break
        default: change.coordinate = try Coordinate(json: object)
        }
        change.categories = try categories(object["categories"])
        if mode == .whole, change.categories == nil { change.categories = [GeoCategoryName.standard] }
        switch object["metadata"] {
        case nil, .null?: if mode == .whole { change.metadata = JSONObject() }
        case .object(let metadata)?:
            try GeoMetadata.validate(metadata)
            change.metadata = metadata
        default: throw GeoError.invalidBody("'metadata' must be a JSON object")
        }
        let objectId: String?
        switch object["objectId"] {
        case nil, .null?: objectId = nil
        case .string(let id)?: objectId = id
        default: throw GeoError.invalidBody("'objectId' must be a string")
        }
        return (change, objectId)
    }

    /// `categories` as an array of names or one name; nil when missing or null.
    private static func categories(_ value: JSONValue?) throws(ErrorEnvelope) -> [String]? {
        switch value {
        case nil, .null?: return nil
        case .string(let name)?: return try GeoCategoryName.set([name])
        case .array(let items)?:
            guard items.count <= 100 else { throw GeoError.invalidBody("A point may be in at most 100 categories") }
            var names: [String] = []
            for item in items {
                guard let name = item.string else { throw GeoError.invalidBody("'categories' must list names") }
                names.append(name)
            }
            return try GeoCategoryName.set(names)
        default: throw GeoError.invalidBody("'categories' must be an array of names")
        }
    }
}
