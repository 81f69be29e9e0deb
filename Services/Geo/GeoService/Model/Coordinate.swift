import DataEngine
import InternalProtocol

/// A position on the sphere in degrees: latitude within ±90, longitude within ±180.
struct Coordinate: Sendable, Hashable {
    let latitude: Double
    let longitude: Double

    /// A checked position: 4001 for NaN, infinities and values out of range.
    init(latitude: Double, longitude: Double) throws(ErrorEnvelope) {
        guard latitude.isFinite, (-90...90).contains(latitude) else {
            throw GeoError.invalidParameter("Latitude must be a number between -90 and 90")
        }
        guard longitude.isFinite, (-180...180).contains(longitude) else {
            throw GeoError.invalidParameter("Longitude must be a number between -180 and 180")
        }
        self.latitude = latitude
        self.longitude = longitude
    }

    /// The position in a JSON object's `latitude` and `longitude` members (4002 when either is
    /// missing or not a number).
    init(json object: JSONObject) throws(ErrorEnvelope) {
        try self.init(
            latitude: try Self.degrees(object["latitude"], "latitude"),
            longitude: try Self.degrees(object["longitude"], "longitude"))
    }

    /// A JSON number as degrees.
    static func degrees(_ value: JSONValue?, _ name: String) throws(ErrorEnvelope) -> Double {
        switch value {
        case .integer(let integer): return Double(integer)
        case .number(let number): return number
        case nil, .null: throw GeoError.invalidBody("The point needs '\(name)'")
        default: throw GeoError.invalidBody("'\(name)' must be a number")
        }
    }

    /// A query parameter as degrees (4001 unless it is a finite number).
    static func degrees(_ text: String, _ name: String) throws(ErrorEnvelope) -> Double {
        guard let value = Double(text), value.isFinite else {
            throw GeoError.invalidParameter("Query parameter '\(name)' must be a number")
        }
        return value
    }
}
