import Synchronization

/// Read-your-writes for app catalogs (schemas and permission rules) across services. Every
/// catalog change is announced to every process, but an announcement takes a moment, and a
/// client's next request may reach another service first. So the gateway carries, on each
/// request, the newest catalog version it knows the request's app reached (from announcements
/// and from answers); a service whose cached catalog of the app is older reads the committed
/// one before using it. Each answer reports the newest version the service used or made, so
/// the gateway that forwarded a change knows its version before any announcement arrives.
package enum CatalogFreshness {
    /// The request's floor: the app and the version its catalog must have reached to be used.
    @TaskLocal package static var floor: Floor?
    /// Where the versions a request used or made are noted, for its answer.
    @TaskLocal package static var report: Report?

    /// A request's app and the catalog version it must see.
    package struct Floor: Sendable, Equatable {
        package let appID: String
        package let version: Int64

        /// Creates a floor.
        package init(appID: String, version: Int64) {
            self.appID = appID
            self.version = version
        }
    }

    /// The newest catalog version of one app that a request used or made.
    package final class Report: Sendable {
        package let appID: String
        private let newest = Mutex<Int64>(0)

        /// An empty report for `appID`'s catalog.
        package init(appID: String) {
            self.appID = appID
        }

        /// Notes that the request used or made `version` of `appID`'s catalog.
        package func note(_ version: Int64, for appID: String) {
            guard appID == self.appID else { return }
            newest.withLock { $0 = max($0, version) }
        }

        /// The newest version noted, if any.
        package var version: Int64? {
            let version = newest.withLock { $0 }
            return version > 0 ? version : nil
        }
    }

    /// The version `appID`'s catalog must have reached for the running request (0: any).
    package static func required(for appID: String) -> Int64 {
        guard let floor, floor.appID == appID else { return 0 }
        return floor.version
    }

    /// Notes, for the running request's answer, that it used or made `version` of `appID`'s catalog.
    package static func note(_ version: Int64, for appID: String) {
        report?.note(version, for: appID)
    }
}
