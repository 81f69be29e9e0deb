/// The schemas every service's route descriptions may refer to by name; the gateway publishes
/// them in `openapi.json` beside the services' own (``RouteManifest/schemas``).
package enum CommonSchemas {
    /// `Error`: the envelope every failure answers (``ErrorEnvelope`` without its status).
    package static let error = APISchema.object(
        ["code": .integer, "message": .string], required: ["code", "message"])

    /// `DataObject`: a stored object as the data API answers it and saves take it: the system
    /// columns (when selected) and any of the table's own columns, which `additionalProperties`
    /// keeps in a generated client.
    package static let dataObject: APISchema = {
        var schema = APISchema.object([
            // Saves take at most 100 characters (grapheme clusters, which JSON Schema cannot count).
            "objectId": APISchema.string.length(1).described(
                "Set by the server unless a save names one: at most 100 characters"),
            "ownerId": APISchema.string.orNull,
            "created": APISchema.integer.orNull.described("Milliseconds since 1970"),
            "updated": APISchema.integer.orNull.described("Milliseconds since 1970"),
            "___class": .string,
        ])
        schema.additionalProperties = .allowed(true)
        return schema
    }()

    /// `SavedObject`: an object as saves take it: ``dataObject`` whose other members are named as
    /// columns are (``APISchema/identifier``; a save naming a member otherwise is refused, 1020),
    /// and QuickBlox's `_parent_id`, which is text when it makes its column.
    package static let savedObject: APISchema = {
        var schema = dataObject.members(
            0, named: APISchema.string.matching("^(?:[A-Za-z][A-Za-z0-9_]{0,62}|_parent_id|___class)$"))
        schema.properties?["_parent_id"] = APISchema.string.orNull
        return schema
    }()

    /// Every common schema by name.
    package static let all: [String: APISchema] = [
        "Error": error, "DataObject": dataObject, "SavedObject": savedObject,
    ]

    /// The largest bound a 64-bit integer parser (`Int(text)`, `Int64(exactly:)`) takes that
    /// JSON Schema's numbers (doubles) can state: `Int64.max` itself rounds up to 2^63, which
    /// overflows.
    package static let largestInteger = Double(Int64.max).nextDown
}

extension APISchema {
    /// This string schema holding `minimum` to `maximum` characters (Unicode code points, as
    /// JSON Schema counts them); no upper bound when `maximum` is nil.
    package func length(_ minimum: Int, _ maximum: Int? = nil) -> APISchema {
        var schema = self
        schema.minLength = minimum > 0 ? minimum : nil
        schema.maxLength = maximum
        return schema
    }

    /// This string schema matching the regular expression `expression` (JSON Schema's ECMA-262
    /// dialect, which is also Python's for the expressions written here); it is not anchored
    /// unless it says `^…$`.
    package func matching(_ expression: String) -> APISchema {
        var schema = self
        schema.pattern = expression
        return schema
    }
}
