// One directory as the walker read it: names as bytes, d_type, and a status fetched only when asked for.
// Never follows a symlink, never reads a file's contents except through readPrefix (O_NOATIME, bounded).
internal import CPosix

/// Handed to a `WalkVisitor` for the length of one `visit` call; the walker reuses it for the next
/// directory, so a visitor copies out what it keeps (`name(_:)`, `path(of:)`), never the listing.
/// One thread uses a listing at a time, and no access overlaps another: the stored properties read per
/// entry skip the dynamic exclusivity checks (`@exclusivity(unchecked)`) that otherwise cost a tenth of the walk.
/// The attribute holds only for accesses made in this module: a stored property read directly from another one
/// is checked there. So what the layers above read is a getter (`path`, `count`, ...) over `@usableFromInline`
/// storage: inlined, it is a plain load.
/// SPI-public so the per-entry reads (`nameBytes`, `type`, `hasStatus`) inline into the judges of the layer
/// above, as ConditionLocked explains; the rest is `package`.
@_spi(Layers) public final class DirectoryListing {
    /// The directory's path, relative to the walk's root.
    @exclusivity(unchecked) @usableFromInline var _path: RelativePath = .root
    @inlinable public var path: RelativePath { _path }
    /// The directory's own status (fstat of the open descriptor).
    @exclusivity(unchecked) @usableFromInline var _directoryStatus: FileStatus = FileStatus(device: 0, inode: 0, type: .directory, size: 0,
                                                              allocatedSize: 0, accessTimeNs: 0,
                                                              modificationTimeNs: 0, changeTimeNs: 0)
    @inlinable public var directoryStatus: FileStatus { _directoryStatus }
    /// The directory's components, sliced from `path` once: lets matchers see paths without copying.
    @exclusivity(unchecked) @usableFromInline var _components: [ArraySlice<UInt8>] = []
    @inlinable public var components: [ArraySlice<UInt8>] { _components }
    /// How many entries (without "." and "..", and without the root's state folder).
    @exclusivity(unchecked) @usableFromInline var _count: Int = 0
    @inlinable public var count: Int { _count }

    // All names back to back, each followed by a NUL so system calls can use them in place.
    @exclusivity(unchecked) @usableFromInline var names: [UInt8] = []
    @exclusivity(unchecked) @usableFromInline var starts: [Int] = []
    @exclusivity(unchecked) @usableFromInline var types: [FileType?] = []
    /// Per entry: the index of its status in `fetched`, or -1 (statuses are large: stored only when fetched).
    @exclusivity(unchecked) @usableFromInline var statusSlots: [Int32] = []
    @exclusivity(unchecked) private var fetched: [FileStatus] = []
    @exclusivity(unchecked) private var statusErrors: [Int: FileSystemError] = [:]
    @exclusivity(unchecked) @usableFromInline var _entered: [Int] = []
    @inlinable public var entered: [Int] { _entered }
    @exclusivity(unchecked) package private(set) var descriptor: Int32 = -1
    /// Tests only (WalkOptions.willStat).
    @exclusivity(unchecked) package var willStat: (@Sendable (RelativePath) -> Void)?
    /// Set by a walk with more than one thread: hands a large directory's remaining stats to an idle thread.
    package var offer: ((StatPrefetch) -> Void)?
    /// The stats being fetched ahead for this directory, if any (see StatPrefetch).
    @exclusivity(unchecked) private var prefetch: StatPrefetch?
    /// The highest entry whose status was asked for while `prefetch` runs.
    @exclusivity(unchecked) private var asked = 0

    /// A directory with at least this many entries may have its stats fetched ahead by another thread,
    /// once its visitor has shown it stats most entries (`prefetchEvidence` of the first entries asked).
    static let prefetchThreshold = 2048
    static let prefetchEvidence = 64

    package init() {}

    // MARK: Reading (the walker)

    /// Reads every entry of `directory`; DT_UNKNOWN entries are stat'ed at once to learn their type.
    package func load(_ directory: WalkDirectory, skipStateDirectory: Bool) throws(FileSystemError) {
        endVisit()
        _path = directory.path
        _directoryStatus = directory.status
        descriptor = directory.descriptor
        _components = _path.isEmpty ? [] : _path.bytes.split(separator: 0x2F, omittingEmptySubsequences: false)
        names.removeAll(keepingCapacity: true)
        starts.removeAll(keepingCapacity: true)
        types.removeAll(keepingCapacity: true)
        statusSlots.removeAll(keepingCapacity: true)
        fetched.removeAll(keepingCapacity: true)
        statusErrors.removeAll(keepingCapacity: true)
        _entered.removeAll(keepingCapacity: true)
        _count = 0
        let nameOffset = MemoryLayout<CInterop.DirectoryEntry>.offset(of: \CInterop.DirectoryEntry.d_name)!
        try directory.withStream { (stream) throws(FileSystemError) in
            while true {
                if let injected = FaultInjection.check(.readdir) {
                    throw FileSystemError(.readdir, path: _path, errno: injected)
                }
                system_errno = 0
                guard let entry = system_readdir(stream) else {
                    let e = Errno.current
                    if e.rawValue == 0 { break }
                    if e == .interrupted { continue }
                    throw FileSystemError(.readdir, path: _path, errno: e)
                }
                let raw = UnsafeRawPointer(entry) + nameOffset
                let length = system_strlen(raw.assumingMemoryBound(to: CChar.self))
                let bytes = UnsafeRawBufferPointer(start: raw, count: length)
                if bytes[0] == 0x2E && (length == 1 || (length == 2 && bytes[1] == 0x2E)) { continue }
                if skipStateDirectory && Markers.isEngineState(bytes) { continue }
                starts.append(names.count)
                names.append(contentsOf: bytes)
                names.append(0)
                types.append(FileType(directoryEntryType: entry.pointee.d_type))
                statusSlots.append(-1)
                _count += 1
            }
        }
        starts.append(names.count)
        for i in 0..<_count where types[i] == nil {
            if let s = try? status(i) { types[i] = s.type }
        }
    }

    /// The visit of this listing is over: any helper fetching its stats ahead stops before the walker
    /// reuses the listing or closes the directory.
    package func endVisit() {
        prefetch?.withdraw()
        prefetch = nil
    }

    // MARK: What a visitor reads

    /// The name's bytes, without copying them.
    @inlinable public func nameBytes(_ i: Int) -> ArraySlice<UInt8> { names[starts[i]..<(starts[i + 1] - 1)] }

    /// `entries` in byte order of their names, sixteen bytes of integer key at a time (`ByteOrder.sortIndices`):
    /// a slice and a memcmp per comparison cost a large folder's naming rule most of its time.
    package func sortedByName(_ entries: [Int]) -> [Int] {
        var sorted = entries
        names.withUnsafeBufferPointer { all in
            let base = all.baseAddress!
            func name(_ i: Int) -> UnsafeBufferPointer<UInt8> {
                UnsafeBufferPointer(start: base + starts[i], count: starts[i + 1] - 1 - starts[i])
            }
            // Names in one folder are distinct: the tie never decides.
            ByteOrder.sortIndices(&sorted, from: 0, length: { starts[$0 + 1] - 1 - starts[$0] },
                                  key: { i, at in ByteOrder.key(name(i), from: at) }, tie: { $0 < $1 })
        }
        return sorted
    }

    /// The name as a value to keep.
    package func name(_ i: Int) -> FileName { FileName(unchecked: Array(nameBytes(i))) }

    /// The entry's root-relative path.
    package func path(of i: Int) -> RelativePath {
        // Put together on the stack, then copied into an array of the exact size in one go: growing an empty
        // array cost more, and so did the arrays' unspecialized uninitialized-capacity initializers.
        let start = starts[i], length = starts[i + 1] - 1 - starts[i]
        let prefix = _path.bytes.count
        let total = prefix == 0 ? length : prefix + 1 + length
        let bytes = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(total, 1)) { out in
            let base = out.baseAddress!
            if prefix > 0 {
                _path.bytes.withUnsafeBufferPointer { base.update(from: $0.baseAddress!, count: prefix) }
                base[prefix] = 0x2F
            }
            if length > 0 { names.withUnsafeBufferPointer { (base + (total - length)).update(from: $0.baseAddress! + start, count: length) } }
            return Array(UnsafeBufferPointer(start: base, count: total))
        }
        return RelativePath(unchecked: bytes)
    }

    /// The type from d_type (or a stat when the file system did not say); nil when it could not be learnt.
    @inlinable public func type(_ i: Int) -> FileType? { types[i] }

    /// True when the entry's status was already fetched (so asking again costs nothing).
    @inlinable public func hasStatus(_ i: Int) -> Bool { statusSlots[i] >= 0 }

    /// The entry's status, fetched with statx(AT_SYMLINK_NOFOLLOW) the first time it is asked for.
    /// ENOENT means the entry vanished after it was listed. An entry that is a mount point (its mount id is
    /// not this directory's) fails with EXDEV, and one whose timestamps do not fit in nanoseconds with
    /// EOVERFLOW: nothing is judged by their status, so no rule can act on them.
    package func status(_ i: Int) throws(FileSystemError) -> FileStatus {
        let slot = statusSlots[i]
        if slot >= 0 { return fetched[Int(slot)] }
        if let e = statusErrors[i] { throw e }
        if let prefetch {
            if i > asked {
                asked = i
                prefetch.cursor.store(i, ordering: .relaxed)
            }
            if let (status, code) = prefetch.result(i) {
                return try record(i, status, code)
            }
        } else if fetched.count == DirectoryListing.prefetchEvidence, _count >= DirectoryListing.prefetchThreshold,
                  i < 2 * DirectoryListing.prefetchEvidence, let offer {
            // Most of the first entries needed a stat: the rest likely will too, so an idle thread starts
            // from the end. (Statuses it fetches that the visitor never asks for are simply dropped.)
            let task = StatPrefetch(descriptor: descriptor, path: _path, directoryStatus: _directoryStatus,
                                    names: names, starts: starts, types: types, count: _count, willStat: willStat)
            task.cursor.store(i, ordering: .relaxed)
            asked = i
            prefetch = task
            offer(task)
        }
        willStat?(path(of: i))
        var s = cposix_stat()
        let r = withName(i) { n in systemCall(.stat) { cposix_stat_at(descriptor, n, &s) } }
        switch r {
        case .success:
            let status = FileStatus(s)
            if !status.isOnSameMount(as: _directoryStatus) {
                return try record(i, nil, StatPrefetch.mountPoint)
            } else if status.hasTimeOutOfRange {
                return try record(i, nil, StatPrefetch.timeOutOfRange)
            }
            return try record(i, status, StatPrefetch.fetchedOK)
        case .failure(let e):
            return try record(i, nil, e.rawValue)
        }
    }

    /// Keeps entry `i`'s status, or its failure (a StatPrefetch code), for the rest of the visit.
    private func record(_ i: Int, _ status: FileStatus?, _ code: Int32) throws(FileSystemError) -> FileStatus {
        if let status {
            statusSlots[i] = Int32(fetched.count)
            fetched.append(status)
            return status
        }
        let error = switch code {
        case StatPrefetch.mountPoint: FileSystemError(.mountPoint, path: path(of: i), errno: .crossDevice)
        case StatPrefetch.timeOutOfRange: FileSystemError(.timeOutOfRange, path: path(of: i), errno: .overflow)
        default: FileSystemError(.fstatat, path: path(of: i), errno: Errno(rawValue: code))
        }
        statusErrors[i] = error
        throw error
    }

    /// Asks the walker to walk into subdirectory `i` after this visit.
    package func enter(_ i: Int) { _entered.append(i) }
    /// Drops the subdirectories entered so far that `keep` refuses (a walk restricted to some paths).
    package func keepEntered(where keep: (Int) -> Bool) { _entered.removeAll { !keep($0) } }

    /// An extended attribute of entry `i` (nil: of this directory itself); nil when it is not set.
    /// Never follows a symlink.
    package func extendedAttribute(_ attribute: String, of i: Int?) throws(FileSystemError) -> [UInt8]? {
        var size = 256
        while true {
            var buffer = [UInt8](repeating: 0, count: size)
            let r: Result<Int, Errno>
            let capacity = size
            if let i {
                r = withName(i) { n in
                    systemCall(.getxattr) { buffer.withUnsafeMutableBytes { cposix_getxattrat(descriptor, n, attribute, $0.baseAddress, capacity) } }
                }
            } else {
                r = systemCall(.getxattr) { buffer.withUnsafeMutableBytes { cposix_fgetxattr(descriptor, attribute, $0.baseAddress, capacity) } }
            }
            switch r {
            case .success(let n): return Array(buffer[0..<n])
            case .failure(let e) where e == .noData: return nil
            case .failure(let e) where e == .range && size < 65536: size *= 16
            case .failure(let e): throw FileSystemError(.getxattr, path: i.map(path(of:)) ?? _path, errno: e)
            }
        }
    }

    /// The first `limit` bytes of regular file `i` (or all of it when shorter), read with O_NOATIME where
    /// permitted and O_NONBLOCK, so a FIFO put in its place cannot hang the walk.
    package func readPrefix(of i: Int, limit: Int) throws(FileSystemError) -> [UInt8] {
        let base = _O_RDONLY | _O_NOFOLLOW | _O_CLOEXEC | _O_NONBLOCK
        var r = withName(i) { n in systemCall(.open) { system_openat(descriptor, n, base | cposix_o_noatime()) } }
        if case .failure(let e) = r, e == .notPermitted {
            r = withName(i) { n in systemCall(.open) { system_openat(descriptor, n, base) } }
        }
        let fd: Int32
        switch r {
        case .success(let f): fd = f
        case .failure(let e): throw FileSystemError(.openat, path: path(of: i), errno: e)
        }
        defer { _ = system_close(fd) }
        var out = [UInt8](repeating: 0, count: limit)
        var filled = 0
        while filled < limit {
            let n = systemCall(.read) { out.withUnsafeMutableBytes { system_read(fd, $0.baseAddress! + filled, limit - filled) } }
            switch n {
            case .success(0): return Array(out[0..<filled])
            case .success(let k): filled += k
            case .failure(let e): throw FileSystemError(.read, path: path(of: i), errno: e)
            }
        }
        return out
    }

    /// Runs `body` with entry `i`'s NUL-terminated name, in place.
    private func withName<R>(_ i: Int, _ body: (UnsafePointer<CChar>) -> R) -> R {
        let start = starts[i]
        return names.withUnsafeBufferPointer { buffer in
            body(UnsafeRawPointer(buffer.baseAddress! + start).assumingMemoryBound(to: CChar.self))
        }
    }
}

extension FileSystemError {
    // `.mountPoint` and `.timeOutOfRange` name no failed call: a mount point is told apart from a real (or
    // injected) EXDEV by the operation, not by the errno alone.
    /// True for the error a mount point's status or removal gives.
    package var isMountPoint: Bool { errno == .crossDevice && operation == .mountPoint }
    /// True for the error an entry with an out-of-range timestamp gives.
    package var isTimeOutOfRange: Bool { errno == .overflow && operation == .timeOutOfRange }
}
