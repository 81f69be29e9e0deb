import DataEngine
import InternalProtocol

/// A point's metadata: a flat JSON object of strings, numbers (dates travel as epoch
/// milliseconds), booleans, nulls and data objects (with `___class`, kept as references by
/// ``GeoDataObjects``), up to ``maximumMembers`` members with names of at most 255 characters.
enum GeoMetadata {
    /// The most members one point's metadata may have.
    static let maximumMembers = 256

    /// 4001/4002 unless `object` is metadata a point may carry.
    static func validate(_ object: JSONObject) throws(ErrorEnvelope) {
        guard object.members.count <= maximumMembers else {
            throw GeoError.invalidBody("Metadata may have at most \(maximumMembers) members")
        }
        for (key, value) in object.members {
            guard (1...255).contains(key.count) else {
                throw GeoError.invalidBody("Metadata names are 1 to 255 characters")
            }
            switch value {
            case .string, .integer, .bool, .null: continue
            case .number(let number) where number.isFinite: continue
            case .object(let object) where GeoDataObjects.table(of: object) != nil: continue
            default:
                throw GeoError.invalidBody(
                    "Metadata value '\(key.prefix(64))' must be a string, a number, a boolean, null or a data object with '___class'"
                )
            }
        }
    }
}
