import InternalProtocol

/// geo-service's errors. Backendless keeps geo in the 4000s; the contract names none beyond
/// the two its SDK tests assert (4061, 4063), so the rest are ours, each with a fitting status.
package enum GeoError {
    /// 4000, 403: the caller may not do this in this category.
    package static func noPermission(_ operation: String, category: String) -> ErrorEnvelope {
        ErrorEnvelope(
            code: 4000, message: "User has no permission to \(operation) in geo category '\(category)'", status: 403)
    }

    /// 4000, 403: an operation only the server-code key may perform.
    package static func serverCodeRequired(_ what: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 4000, message: "\(what) needs the server-code key", status: 403)
    }

    /// 4001, 400: a coordinate, radius, rectangle, unit or other search parameter out of range
    /// or not a number.
    package static func invalidParameter(_ message: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 4001, message: message, status: 400)
    }

    /// 4002, 400: a body that is not what the route takes (not JSON, a point without
    /// coordinates, metadata that is not an object).
    package static func invalidBody(_ message: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 4002, message: message, status: 400)
    }

    /// 4003, 400: a where clause that does not parse or uses what metadata cannot answer.
    package static func invalidWhereClause(_ message: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 4003, message: "Invalid where clause: \(message)", status: 400)
    }

    /// 4005, 400: a category name that is empty, too long or holds a comma or control character.
    package static func invalidCategoryName(_ name: String) -> ErrorEnvelope {
        ErrorEnvelope(
            code: 4005,
            message: "Invalid geo category name '\(name)': 1 to 100 characters without commas or control characters",
            status: 400)
    }

    /// 4006, 409: the Default category is always there; it cannot be created or removed (the name is
    /// valid, the built-in category's state conflicts with the request).
    package static let defaultCategory = ErrorEnvelope(
        code: 4006, message: "The Default geo category cannot be created or deleted", status: 409)

    /// 4007, 404: no category by that name.
    package static func categoryNotFound(_ name: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 4007, message: "Geo category '\(name)' does not exist", status: 404)
    }

    /// 4008, 404: no point with that id.
    package static func pointNotFound(_ id: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 4008, message: "Geo point '\(id)' does not exist", status: 404)
    }

    /// 4009, 404: a cluster id that names no cluster of this search.
    package static func clusterNotFound(_ id: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 4009, message: "Geo cluster '\(id)' does not exist", status: 404)
    }

    /// 4010, 409: the point's categories changed between the permission check and the write;
    /// retrying decides on the new ones.
    package static func changedMeanwhile(_ id: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 4010, message: "Geo point \(id) changed categories meanwhile; retry", status: 409)
    }

    /// 4060, 400: a geofence definition that is not a valid circle, rectangle or polygon.
    package static func invalidFence(_ message: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 4060, message: "Invalid geofence: \(message)", status: 400)
    }

    /// 4061, 404: no geofence by that name.
    package static func fenceNotFound(_ name: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 4061, message: "Geofence '\(name)' does not exist", status: 404)
    }

    /// 4063, 400: the fence has no action for this event.
    package static func actionNotConfigured(_ event: String, fence: String) -> ErrorEnvelope {
        ErrorEnvelope(code: 4063, message: "Geofence '\(fence)' has no \(event) action", status: 400)
    }
}
