/// The schemas every service's route descriptions may refer to by name; the gateway publishes
/// them in `openapi.json` beside the services' own (``RouteManifest/schemas``).
package enum CommonSchemas {
    /// `Error`: the envelope every failure answers (``ErrorEnvelope`` without its status).
    package static let error = APISchema.object(
        ["code": .integer, "message": .string], required: ["code", "message"])

    /// `DataObject`: a stored object as the data API answers it: its columns, plus the system
    /// columns when selected.
    package static let dataObject = APISchema.object([
        "objectId": .string,
        "ownerId": APISchema.string.orNull,
        "created": APISchema.integer.orNull.described("Milliseconds since 1970"),
        "updated": APISchema.integer.orNull.described("Milliseconds since 1970"),
        "___class": .string,
    ])

    /// Every common schema by name.
    package static let all: [String: APISchema] = ["Error": error, "DataObject": dataObject]
}
