import DataEngine
import InternalProtocol
import QueryLanguage

/// One search as the query string states it (contract §5): where to look, which points count,
/// and how the answer is shaped. The same parameters drive points, rectangles, counts,
/// clusters, cluster points and relative finds.
struct GeoSearch: Sendable {
    /// A circle: points within `meters` of `center`.
    struct Radius: Sendable {
        let center: Coordinate
        let meters: Double
    }

    /// Where points may be.
    enum Area: Sendable {
        case everywhere
        case radius(Radius)
        case rectangle(GeoRectangle)
    }

    var area: Area = .everywhere
    /// The point distances are measured from: a radius's center, or `lat`/`lon` alone.
    var center: Coordinate?
    var unit = DistanceUnit.meters
    var categories = [GeoCategoryName.standard]
    /// Where the caller's own points count, when an owner policy makes it differ from
    /// ``categories`` (which then holds only for the points of others; ``GeoAccess``).
    var ownCategories: OwnCategories?
    /// `metadata=`: every member must equal the point's.
    var metadataEquals: JSONObject?
    var condition: Condition?
    var includeMetadata = false
    var pageSize = 100
    var offset = 0
    /// `dpp` × `clustergridsize`: the side of a cluster cell in degrees.
    var clusterCell: Double?
    /// The smallest cell side and `dpp` (degrees; about 0.1 mm): smaller, a cell's column and row
    /// outgrow the 64-bit numbers PostgreSQL computes them in.
    static let smallestCell = 1e-9
    var relative: RelativeFind?
    var fence: String?
    /// The named fence's area, once the store has looked it up.
    var fenceArea: GeoFence.Area?
    /// Only the points in this grid cell (a cluster's points and metadata).
    var cell: GeoClusterID?

    /// The largest page.
    static let maximumPageSize = 1000
}

/// `relativeFindMetadata` and `relativeFindPercentThreshold`: points matching at least
/// `threshold` percent of the members.
struct RelativeFind: Sendable {
    let metadata: JSONObject
    let threshold: Double
}

/// A rectangle between two parallels and two meridians; `west > east` crosses the antimeridian.
struct GeoRectangle: Sendable {
    let north: Double
    let west: Double
    let south: Double
    let east: Double

    /// The longitude ranges it spans: one, or two when it crosses the antimeridian.
    var longitudeRanges: [ClosedRange<Double>] {
        west <= east ? [west...east] : [west...180, -180...east]
    }
}
