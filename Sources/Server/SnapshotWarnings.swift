// What a loaded snapshot left out (features whose geometry could not be read, tile sets'
// unusable metadata) is logged once per load at warning level, one line per item, so an
// operator sees which layer and fid to fix; `/healthz` and the reload answer carry the count.

import Engine
import Logging

extension Logger {
    func logWarnings(of snapshot: Snapshot) {
        for warning in snapshot.warnings {
            self.warning("left out of the snapshot", metadata: ["detail": "\(warning)"])
        }
    }
}
