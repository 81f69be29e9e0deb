import DataEngine
import Foundation
import TestSupport

@testable import GeoService

/// What a search should find, computed plainly: great-circle distances on the same sphere,
/// rectangles as latitude and longitude ranges, metadata compared member by member.
enum GeoOracle {
    /// The haversine distance in metres.
    static func distance(_ a: Coordinate, _ b: Coordinate) -> Double {
        let (φ1, φ2) = (a.latitude * .pi / 180, b.latitude * .pi / 180)
        let Δφ = φ2 - φ1
        let Δλ = (b.longitude - a.longitude) * .pi / 180
        let h = pow(sin(Δφ / 2), 2) + cos(φ1) * cos(φ2) * pow(sin(Δλ / 2), 2)
        return 2 * Sphere.radius * asin(min(1, sqrt(h)))
    }

    /// Whether `point` is in the search's categories and area and matches its metadata; nil
    /// when it lies so close to a radius's edge that rounding may decide either way.
    static func matches(_ point: SamplePoint, _ search: GeoSearch, where predicate: (JSONObject) -> Bool) -> Bool? {
        guard !Set(point.categories).isDisjoint(with: search.categories) else { return false }
        if let equal = search.metadataEquals, !equal.members.allSatisfy({ point.metadata[$0.key] == $0.value }) {
            return false
        }
        guard predicate(point.metadata) else { return false }
        switch search.area {
        case .everywhere: return true
        case .rectangle(let rectangle):
            let (latitude, longitude) = (point.coordinate.latitude, point.coordinate.longitude)
            guard rectangle.south <= latitude, latitude <= rectangle.north else { return false }
            return rectangle.west <= rectangle.east
                ? rectangle.west <= longitude && longitude <= rectangle.east
                : longitude >= rectangle.west || longitude <= rectangle.east
        case .radius(let radius):
            let distance = distance(radius.center, point.coordinate)
            if abs(distance - radius.meters) <= 1e-6 * radius.meters + 1e-3 { return nil }
            return distance <= radius.meters
        }
    }
}

extension SeededGenerator {
    /// The seed from `GEO_TEST_SEED`, else a fresh one.
    static var seed: UInt64 { seed("GEO_TEST_SEED") }
}
