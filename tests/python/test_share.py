#!/usr/bin/env python3
"""The zerohop Python module against real publisher processes (ctest label `ipc`).

    PYTHONPATH=<build>/python python3 tests/python/test_share.py \
        --share-peer <build>/tests/share/zerohop_share_peer \
        --publisher <build>/python/tests/zerohop_py_share_publisher [-v] [unittest args]

Publishers: tests/share/share_peer ("publish NAME DIR SLOTS": NV12 96x48, pitch 128, one frame per
ms) and tests/python/py_share_publisher ("images|encoded|opus NAME DIR SLOTS": I420 96x48 pitch 64-aligned,
encoded units, or a tone's Opus packets; prints "ready" and publishes only after "go"). Every byte of every frame derives
from its sequence number (tests/share/share_test_support.hpp), so each frame is checked in full.
Exits 77 (ctest: skipped) when numpy is missing.
"""
import argparse
import asyncio
import gc
import os
import select
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest

try:
    import numpy as np
except ImportError:
    print("SKIP: numpy is not installed (apt install python3-numpy)")
    sys.exit(77)

import zerohop

PEERS = argparse.Namespace(share_peer=None, publisher=None)
NEXT_TIMEOUT = 5.0  # a hang guard, not a speed check
READY_TIMEOUT = 20.0  # for a publisher's "ready" line; a hang guard too
ROTATIONS = 4 * 8  # publishes after which an 8-slot ring has rewritten every slot nobody leased


# ---- the content pattern (mirrors tests/share/share_test_support.hpp) ----------------------------
def pattern(seq, plane, rows, width_bytes):
    off = np.arange(rows * width_bytes, dtype=np.uint64).reshape(rows, width_bytes)
    return ((np.uint64(seq * 7 + plane * 101) + off * np.uint64(13) + (off >> np.uint64(9))) & np.uint64(0xFF)).astype(
        np.uint8)


def unit_size(seq):
    return 100 + (seq * 997) % 6000


def unit_bytes(seq):
    return pattern(seq, 0, 1, unit_size(seq)).tobytes()


def expected_planes(frame):
    """Expected (rows, meaningful bytes per row) arrays of every plane of an NV12 or I420 frame."""
    w, h = frame.width, frame.height
    if frame.format == "nv12":
        shapes = [(h, w), (h // 2, w)]
    elif frame.format == "i420":
        shapes = [(h, w), (h // 2, w // 2), (h // 2, w // 2)]
    else:
        raise AssertionError("unexpected format " + frame.format)
    return [pattern(frame.seq, p, r, c) for p, (r, c) in enumerate(shapes)]


# ---- publisher processes ------------------------------------------------------------------------
class Process:
    """A publisher child process; prints "ready" once its share exists. Killed on close()."""

    def __init__(self, argv):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        said, _, _ = select.select([self.proc.stdout], [], [], READY_TIMEOUT)
        line = self.proc.stdout.readline().strip() if said else "nothing within %.0f s" % READY_TIMEOUT
        if line != "ready":
            self.close()
            raise AssertionError("publisher %s said %r instead of 'ready'" % (argv, line))

    @property
    def pid(self):
        return self.proc.pid

    def go(self):
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout):
            f.close()


class ShareTest(unittest.TestCase):
    """Each test gets its own share directory (0700) and name."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="zerohop-py-")
        self.name = "py-" + self.id().rsplit(".", 1)[-1][:40]
        self.procs = []

    def tearDown(self):
        for p in self.procs:
            p.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def start_share_peer(self, slots=8):
        p = Process([PEERS.share_peer, "publish", self.name, self.dir, str(slots)])
        self.procs.append(p)
        return p

    def start_publisher(self, mode, slots=8, go=True):
        p = Process([PEERS.publisher, mode, self.name, self.dir, str(slots)])
        self.procs.append(p)
        if go:
            p.go()
        return p

    def subscribe(self, **kwargs):
        return zerohop.Subscriber(self.name, directory=self.dir, **kwargs)

    def next_frame(self, sub):
        f = sub.next(timeout=NEXT_TIMEOUT)
        self.assertIsNotNone(f, "no frame within %.0f s" % NEXT_TIMEOUT)
        return f

    def wait_for_publishes_past(self, sub, seq, count=ROTATIONS):
        """Reads and releases frames until one at least `count` publishes after `seq` arrives."""
        deadline = time.monotonic() + NEXT_TIMEOUT
        while True:
            f = self.next_frame(sub)
            got = f.seq
            f.release()
            if got >= seq + count:
                return
            self.assertLess(time.monotonic(), deadline, "fewer than %d publishes after seq %d" % (count, seq))


class ImageFramesTest(ShareTest):
    def setUp(self):
        super().setUp()
        self.pub = self.start_share_peer(slots=8)
        self.sub = self.subscribe()

    def tearDown(self):
        self.sub.close()
        super().tearDown()

    def test_info(self):
        info = self.sub.info
        self.assertEqual(info["name"], self.name)
        self.assertEqual((info["format"], info["width"], info["height"]), ("nv12", 96, 48))
        self.assertEqual(info["slots"], 8)
        self.assertEqual(info["memory"], "host")
        self.assertFalse(info["encoded"])
        self.assertEqual(info["publisher_pid"], self.pub.pid)
        self.assertEqual(info["transport"], "host-memfd")
        self.assertFalse(info["in_process"])
        self.assertNotIn("device_access", info)  # device shares only
        self.assertTrue(self.sub.connected)

    def test_next_frames_match_the_pattern_with_rising_sequence(self):
        last_seq, last_index, verified, invalid = 0, 0, 0, 0
        while verified < 60:
            with self.next_frame(self.sub) as f:
                y = np.from_dlpack(f)  # plane 0, zero-copy
                uv = np.asarray(f.plane(1))  # buffer protocol
                want = expected_planes(f)
                y_ok, uv_ok = np.array_equal(y, want[0]), np.array_equal(uv, want[1])
                if not f.valid():  # overwritten while we looked: never trusted, never counted
                    invalid += 1
                    self.assertLess(invalid, 60, "too many overruns")
                    continue
                self.assertTrue(y_ok, "luma of valid frame %d differs" % f.seq)
                self.assertTrue(uv_ok, "chroma of valid frame %d differs" % f.seq)
                self.assertGreater(f.seq, last_seq)
                self.assertGreater(f.publish_index, last_index)
                ts = f.timestamps
                self.assertIn("publish", ts)
                self.assertGreater(ts["publish"], 0)
                self.assertLessEqual(ts["publish"], time.monotonic_ns())  # CLOCK_MONOTONIC, like ours
                self.assertEqual(f.wall_clock_ms, f.seq)  # share_peer stamps wallClockMs = sequence
                self.assertEqual((f.format, f.width, f.height, f.memory), ("nv12", 96, 48, "host"))
                last_seq, last_index = f.seq, f.publish_index
                verified += 1
        self.assertEqual(self.sub.stats["frames"], verified + invalid)

    def test_arrays_are_zero_copy_read_only_views_with_the_real_pitch(self):
        with self.next_frame(self.sub) as f:
            self.assertEqual(f.__dlpack_device__(), (1, 0))  # kDLCPU
            y = np.from_dlpack(f)
            self.assertEqual((y.shape, y.strides, y.dtype), ((48, 96), (128, 1), np.uint8))
            self.assertFalse(y.flags.writeable)
            uv = np.asarray(f.plane(1))
            self.assertEqual((uv.shape, uv.strides), ((24, 96), (128, 1)))
            self.assertFalse(uv.flags.writeable)
            with self.assertRaises(ValueError):
                uv[0, 0] = 1
            self.assertEqual([p.shape for p in f.planes], [(48, 96), (24, 96)])
            # Zero-copy: two exports of the same plane share memory.
            self.assertTrue(np.shares_memory(np.from_dlpack(f), np.asarray(f)))
            self.assertEqual(np.from_dlpack(f.plane(1)).__array_interface__["data"][0],
                             uv.__array_interface__["data"][0])
            # bytes(): every plane tightly packed (a copy).
            self.assertEqual(bytes(f), b"".join(p.tobytes() for p in expected_planes(f)))
            with self.assertRaises(zerohop.InvalidArgumentError):
                f.data  # images: use planes
            with self.assertRaises(zerohop.InvalidArgumentError):
                f.plane(2)
            with self.assertRaises(zerohop.InvalidArgumentError):
                f.__dlpack__(stream=1)  # host memory takes no stream

    def test_dlpack_capsules_legacy_and_versioned(self):
        with self.next_frame(self.sub) as f:
            self.assertIn('"dltensor"', repr(f.__dlpack__()))  # pre-1.0 consumers (numpy 1.x)
            self.assertIn('"dltensor_versioned"', repr(f.__dlpack__(max_version=(1, 0))))  # read-only flag
            self.assertIn('"dltensor"', repr(f.plane(1).__dlpack__(max_version=(0, 8))))
            with self.assertRaises(zerohop.InvalidArgumentError):
                f.__dlpack__(copy=True)
            with self.assertRaises(zerohop.InvalidArgumentError):
                f.__dlpack__(dl_device=(2, 0))  # not on a GPU

    def test_torch_reads_host_frames_zero_copy(self):
        try:
            import torch
        except ImportError:
            self.skipTest("torch is not installed")
        with self.next_frame(self.sub) as f:
            t = torch.from_dlpack(f)
            self.assertEqual(tuple(t.shape), (48, 96))
            self.assertEqual(t.stride(), (128, 1))
            self.assertEqual(t.device.type, "cpu")
            self.assertEqual(t.data_ptr(), np.from_dlpack(f).__array_interface__["data"][0])
            uv = torch.from_dlpack(f.plane(1))
            want = expected_planes(f)
        self.wait_for_publishes_past(self.sub, f.seq)  # the tensors alone hold the lease now
        self.assertTrue(np.array_equal(t.numpy(), want[0]))
        self.assertTrue(np.array_equal(uv.numpy(), want[1]))

    def test_with_releases_the_frame_but_arrays_keep_the_lease(self):
        # Two frames, so that each array is the only thing holding its frame's lease.
        with self.next_frame(self.sub) as f:
            y = np.from_dlpack(f)  # held through its DLPack capsule's deleter
        with self.next_frame(self.sub) as g:
            uv = np.asarray(g.plane(1))  # held through the buffer's exporter (a Plane)
        self.assertTrue(f.released)
        self.assertFalse(f.valid())
        self.assertGreater(f.seq, 0)  # metadata stays readable
        for touch in (lambda: f.plane(0), lambda: f.planes, lambda: np.from_dlpack(f), lambda: bytes(f),
                      lambda: np.asarray(f)):
            with self.assertRaises(zerohop.InvalidArgumentError) as cm:
                touch()
            self.assertIn("released", str(cm.exception))
        # Enough publishes into 8 slots that a slot nobody leased would have been rewritten (the mapping
        # itself stays, so a lost lease shows as changed content, not as a crash).
        self.wait_for_publishes_past(self.sub, g.seq)
        self.assertTrue(np.array_equal(y, expected_planes(f)[0]), "slot overwritten under a live DLPack array")
        self.assertTrue(np.array_equal(uv, expected_planes(g)[1]), "slot overwritten under a live buffer array")

    def test_a_plane_keeps_the_lease_and_says_whether_it_is_valid(self):
        f = self.next_frame(self.sub)
        chroma = f.plane(1)
        f.release()
        self.wait_for_publishes_past(self.sub, f.seq)
        self.assertTrue(chroma.valid())
        self.assertTrue(np.array_equal(np.asarray(chroma), expected_planes(f)[1]))
        self.assertTrue(np.array_equal(np.from_dlpack(chroma), expected_planes(f)[1]))

    def test_release_is_idempotent_and_exceptions_release_too(self):
        f = self.next_frame(self.sub)
        f.release()
        f.release()
        self.assertTrue(f.released)
        with self.assertRaises(KeyError):
            with self.next_frame(self.sub) as g:
                raise KeyError("boom")
        self.assertTrue(g.released)

    def test_release_and_with_give_the_lease_back(self):
        # A subscriber may hold 32 leases at once; these 80 frames stay alive as objects, so only
        # release() / leaving `with` can have given their leases back.
        kept = []
        for _ in range(40):
            f = self.next_frame(self.sub)
            f.release()
            kept.append(f)
        for _ in range(40):
            with self.next_frame(self.sub) as f:
                kept.append(f)
        held = []
        with self.assertRaises(zerohop.UnavailableError) as cm:
            for _ in range(40):
                held.append(self.next_frame(self.sub))
        self.assertIn("release some", str(cm.exception))
        self.assertEqual(len(held), 32)

    def test_unconsumed_capsules_and_many_arrays_are_freed(self):
        f = self.next_frame(self.sub)
        for _ in range(1000):
            f.__dlpack__()  # dropped unconsumed: the capsule's destructor frees it
            np.from_dlpack(f)
        gc.collect()
        self.assertTrue(f.valid())
        f.release()

    def test_threads_may_share_a_subscriber(self):
        errors, seqs = [], []

        def read():
            try:
                for _ in range(25):
                    with self.next_frame(self.sub) as f:
                        ok = np.array_equal(np.from_dlpack(f), expected_planes(f)[0])
                        if f.valid():
                            self.assertTrue(ok)
                            seqs.append(f.seq)
            except Exception as e:  # reported below, on the test's own thread
                errors.append(e)

        threads = [threading.Thread(target=read) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertEqual(len(seqs), len(set(seqs)), "next() handed one frame out twice")

    def test_latest(self):
        self.next_frame(self.sub).release()  # "ready" comes before the first publish
        a = self.sub.latest()
        self.assertIsNotNone(a)
        deadline = time.monotonic() + NEXT_TIMEOUT
        b = self.sub.latest()
        while b.seq <= a.seq:  # latest() must move on as the publisher does
            self.assertLess(time.monotonic(), deadline, "latest() stayed at seq %d" % a.seq)
            b.release()
            time.sleep(0.001)
            b = self.sub.latest()
        c = self.next_frame(self.sub)  # the first one published after the last one returned
        self.assertGreater(c.seq, b.seq)
        for g in (a, b, c):
            g.release()

    def test_frames_outlive_their_subscriber(self):
        f = self.next_frame(self.sub)
        y = np.from_dlpack(f)
        self.sub.close()
        self.assertTrue(self.sub.closed)
        with self.assertRaises(zerohop.InvalidArgumentError):
            self.sub.next(timeout=0.1)
        self.assertTrue(f.valid())
        self.assertTrue(np.array_equal(y, expected_planes(f)[0]))


class GatedImagesTest(ShareTest):
    """A publisher that has published nothing yet, then I420 frames."""

    def test_nothing_published_then_i420(self):
        pub = self.start_publisher("images", slots=4, go=False)
        sub = self.subscribe()
        self.assertEqual(sub.info["format"], "i420")
        self.assertIsNone(sub.latest())

        ticks = [0]
        stop = threading.Event()

        def spin():  # runs only if next() lets go of the GIL while it waits
            while not stop.is_set():
                ticks[0] += 1
                time.sleep(0.001)

        spinner = threading.Thread(target=spin)
        spinner.start()
        t0 = time.monotonic()
        got = sub.next(timeout=0.3)
        waited = time.monotonic() - t0
        stop.set()
        spinner.join()
        self.assertIsNone(got)
        self.assertGreaterEqual(waited, 0.28)
        self.assertLess(waited, 3.0)
        self.assertGreater(ticks[0], 10, "next() held the GIL while waiting")

        pub.go()
        with self.next_frame(sub) as f:
            self.assertEqual(f.format, "i420")
            self.assertEqual([p.shape for p in f.planes], [(48, 96), (24, 48), (24, 48)])
            self.assertEqual([p.strides for p in f.planes], [(128, 1), (64, 1), (64, 1)])
            planes = [np.asarray(p) for p in f.planes]
            packed = bytes(f)
            want = expected_planes(f)
            self.assertTrue(f.valid())
            for got_plane, want_plane in zip(planes, want):
                self.assertTrue(np.array_equal(got_plane, want_plane))
            self.assertEqual(packed, b"".join(w.tobytes() for w in want))
            self.assertEqual(len(packed), 96 * 48 * 3 // 2)
            self.assertEqual(f.timestamps["capture"], f.seq * 1000)
            self.assertIn("publish", f.timestamps)
        sub.close()


class EncodedUnitsTest(ShareTest):
    def test_units(self):
        self.start_publisher("encoded", slots=8)
        sub = self.subscribe()
        self.assertTrue(sub.info["encoded"])
        self.assertEqual(sub.info["format"], "h264")
        last, verified = 0, 0
        while verified < 40:
            with self.next_frame(sub) as f:
                data = bytes(f)
                view = f.data
                arr = np.from_dlpack(f)
                if not f.valid():
                    continue
                self.assertTrue(f.encoded)
                self.assertEqual(f.format, "h264")
                self.assertEqual(f.bytes_used, unit_size(f.seq))
                self.assertEqual(data, unit_bytes(f.seq))
                self.assertIsInstance(view, memoryview)
                self.assertTrue(view.readonly)
                self.assertEqual(view.nbytes, unit_size(f.seq))
                self.assertEqual(arr.shape, (unit_size(f.seq),))
                self.assertEqual(f.keyframe, f.seq % 10 == 0)
                self.assertEqual(f.timestamps["encode"], f.seq * 1000)
                self.assertGreater(f.seq, last)
                last = f.seq
                verified += 1
        # A memoryview holds the lease too.
        f = self.next_frame(sub)
        view = f.data
        if hasattr(zerohop, "SoundDecoder"):  # a picture's unit is not sound
            with self.assertRaises(zerohop.InvalidArgumentError) as cm:
                zerohop.SoundDecoder().decode(f)
            self.assertIn("the frame is h264, not an Opus packet", str(cm.exception))
        f.release()
        self.assertEqual(view.tobytes(), unit_bytes(f.seq))
        sub.close()


@unittest.skipUnless(hasattr(zerohop, "SoundDecoder"), "the module was built without libopus (libopus-dev)")
class SoundTest(ShareTest):
    """A sound share (what serve --share NAME publishes as NAME.opus) read as PCM: a 440 Hz tone through
    serve's Opus encode, packet 25 never published (concealed where the sequence numbers jump)."""

    def read_packets(self, each):
        """Calls each(frame) on packets 0..49 as they come (25 never does), releasing each after."""
        self.start_publisher("opus", slots=64)
        sub = self.subscribe()
        self.addCleanup(sub.close)
        self.assertEqual(sub.info["format"], "opus")
        seqs = []
        while not seqs or seqs[-1] < 49:
            with self.next_frame(sub) as f:
                seqs.append(f.seq)
                each(f)
        return seqs

    def test_a_tone_decodes_to_the_tone_with_the_missing_packet_concealed(self):
        dec = zerohop.SoundDecoder(channels=1)
        self.assertEqual((dec.channels, dec.sample_rate), (1, 48000))
        blocks, packets, want = [], [], [0]

        def decode(f):
            for _ in range(f.seq - want[0]):
                blocks.append(np.asarray(dec.decode(None)))
            pcm = dec.decode(f)
            self.assertEqual((pcm.frames, pcm.channels, len(pcm)), (960, 1, 960))
            blocks.append(np.asarray(pcm))
            packets.append(bytes(f))
            want[0] = f.seq + 1

        self.assertEqual(self.read_packets(decode), [s for s in range(50) if s != 25])
        self.assertEqual((dec.packets_decoded, dec.packets_concealed), (49, 1))
        sound = np.concatenate(blocks)
        self.assertEqual(sound.shape, (50 * 960, 1))
        self.assertEqual(sound.dtype, np.int16)
        mono = sound[4800:, 0].astype(np.float64)  # past the decoder's first 100 ms
        rising = np.count_nonzero((mono[:-1] < 0) & (mono[1:] >= 0))
        self.assertAlmostEqual(rising * 48000 / len(mono), 440, delta=5)
        rms = np.sqrt(np.mean(mono ** 2))
        self.assertGreater(rms, 4000, "a sine at a quarter of full scale (5,800), not silence")

        # The same packets as bytes, into a stereo decoder: both sides the mono PCM's, sample for sample.
        stereo = zerohop.SoundDecoder(2)
        again = np.concatenate([np.asarray(stereo.decode(p)) for p in packets[:10]])
        self.assertEqual(again.shape, (10 * 960, 2))
        self.assertTrue(np.array_equal(again[:, 0], again[:, 1]))
        self.assertTrue(np.array_equal(again[:, 0], sound[:10 * 960, 0]))

    def test_bad_input_says_why(self):
        with self.assertRaises(zerohop.InvalidArgumentError) as cm:
            zerohop.SoundDecoder(3)
        self.assertIn("1 (mono) or 2 (stereo)", str(cm.exception))
        dec = zerohop.SoundDecoder()
        with self.assertRaises(zerohop.InvalidArgumentError) as cm:
            dec.decode(b"\x03")
        self.assertIn("not an Opus packet", str(cm.exception))
        released = []
        self.read_packets(released.append)
        with self.assertRaises(zerohop.InvalidArgumentError):
            dec.decode(released[0])  # released: no bytes to decode any more
        self.assertEqual(dec.packets_decoded, 0)


class FailureTest(ShareTest):
    def test_no_such_share(self):
        t0 = time.monotonic()
        with self.assertRaises(zerohop.NotFoundError) as cm:
            self.subscribe(timeout=0.3)
        self.assertGreaterEqual(time.monotonic() - t0, 0.3, "gave up before its timeout")
        e = cm.exception
        self.assertIsInstance(e, zerohop.Error)
        self.assertIn(self.name, str(e))
        self.assertIn("no publisher", str(e))
        self.assertEqual(e.errc, "not found")

    def test_bad_name(self):
        with self.assertRaises(zerohop.InvalidArgumentError) as cm:
            zerohop.Subscriber("no/slashes", directory=self.dir)
        self.assertIsInstance(cm.exception, ValueError)
        with self.assertRaises(zerohop.InvalidArgumentError):
            zerohop.Subscriber(self.name, timeout=-1, directory=self.dir)

    def test_bad_device_options(self):
        with self.assertRaises(zerohop.InvalidArgumentError) as cm:
            zerohop.Subscriber(self.name, directory=self.dir, device_access="peer")
        self.assertIn('"auto" or "copy"', str(cm.exception))
        with self.assertRaises(zerohop.InvalidArgumentError) as cm:
            zerohop.Subscriber(self.name, directory=self.dir, device=-1)
        self.assertIn("device ordinal", str(cm.exception))

    def fake_publisher(self, reply):
        """A socket at NAME.sock that answers the Hello with `reply` (or nothing, when None)."""
        server = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        server.bind(os.path.join(self.dir, self.name + ".sock"))
        server.listen(1)

        def serve():
            conn, _ = server.accept()
            conn.recv(4096)  # the Hello
            if reply is not None:
                conn.send(reply)
            time.sleep(1.0)
            conn.close()

        t = threading.Thread(target=serve, daemon=True)
        t.start()
        self.addCleanup(server.close)
        return t

    def test_version_mismatch_is_a_protocol_error(self):
        welcome_v7 = struct.pack("<IHHII", 0x5A484F50, 7, 2, 48, 0) + bytes(48)
        self.fake_publisher(welcome_v7)
        with self.assertRaises(zerohop.ProtocolError) as cm:
            self.subscribe()
        self.assertIn("v7", str(cm.exception))
        self.assertEqual(cm.exception.errc, "protocol error")

    def test_silent_publisher_is_a_timeout(self):
        self.fake_publisher(None)
        t0 = time.monotonic()
        with self.assertRaises(zerohop.TimeoutError) as cm:
            self.subscribe(timeout=0.3)
        self.assertLess(time.monotonic() - t0, 3.0)
        self.assertIsInstance(cm.exception, TimeoutError)  # the builtin as well
        self.assertIn("did not answer", str(cm.exception))

    def test_subscribing_waits_for_a_killed_publisher_to_restart(self):
        self.start_share_peer(slots=8).close()  # SIGKILL: its socket file stays
        self.assertTrue(os.path.exists(os.path.join(self.dir, self.name + ".sock")))
        with self.assertRaises(zerohop.UnavailableError) as cm:
            self.subscribe(timeout=0)
        self.assertIn("stale socket", str(cm.exception))
        restarted = []
        # The publisher's restart 0.3 s into the reader's wait is what is tested.
        timer = threading.Timer(0.3, lambda: restarted.append(self.start_share_peer(slots=8)))
        timer.start()
        try:
            sub = self.subscribe(timeout=20.0)
        finally:
            timer.join()
        self.assertEqual(len(restarted), 1)
        self.assertEqual(sub.info["publisher_pid"], restarted[0].pid)
        f = self.next_frame(sub)
        self.assertTrue(np.array_equal(np.from_dlpack(f), expected_planes(f)[0]))
        f.release()
        sub.close()

    def test_publisher_killed_then_restarted(self):
        pub = self.start_share_peer(slots=8)
        sub = self.subscribe()
        first_session = sub.info["session_id"]
        f = self.next_frame(sub)
        y = np.from_dlpack(f)
        self.assertTrue(f.valid())
        pub.close()  # SIGKILL
        t0 = time.monotonic()
        with self.assertRaises(zerohop.UnavailableError) as cm:
            for _ in range(1000):  # frames published before the kill may still come first
                sub.next(timeout=2.0)
        self.assertLess(time.monotonic() - t0, 3.0)
        self.assertIn("went away", str(cm.exception))
        self.assertFalse(sub.connected)
        with self.assertRaises(zerohop.UnavailableError):
            sub.latest()
        # What a reader holds stays mapped and readable after its publisher died.
        self.assertTrue(np.array_equal(y, expected_planes(f)[0]))

        pub2 = self.start_share_peer(slots=8)
        sub.reconnect()
        self.assertTrue(sub.connected)
        self.assertEqual(sub.info["publisher_pid"], pub2.pid)
        self.assertNotEqual(sub.info["session_id"], first_session)
        g = self.next_frame(sub)
        self.assertTrue(np.array_equal(np.from_dlpack(g), expected_planes(g)[0]))
        self.assertEqual(sub.stats["reconnects"], 1)
        sub.close()


class PollTest(ShareTest):
    def test_asyncio_reader_gets_every_frame_at_30_fps_and_select_sees_the_publisher_die(self):
        frames = 30
        pub = Process([PEERS.share_peer, "publish-paced", self.name, self.dir, "4", "30", str(frames)])
        self.procs.append(pub)
        sub = self.subscribe()
        seqs = []

        async def read_all():
            loop = asyncio.get_running_loop()
            done = loop.create_future()

            def readable():  # no thread waits in next(): the event loop says when to read
                while (f := sub.next(timeout=0)) is not None:
                    self.assertTrue(np.array_equal(np.from_dlpack(f), expected_planes(f)[0]))
                    seqs.append(f.seq)
                    f.release()
                if len(seqs) >= frames and not done.done():
                    done.set_result(None)

            loop.add_reader(sub.fileno(), readable)
            try:
                await asyncio.wait_for(done, timeout=frames / 30 + 10.0)  # a hang guard
            finally:
                loop.remove_reader(sub.fileno())

        asyncio.run(read_all())
        # From the newest frame when it subscribed (the first, unless the machine was slow) to the last.
        self.assertLessEqual(seqs[0], 2)
        self.assertEqual(seqs, list(range(seqs[0], frames + 1)), "every frame, in order, none twice")
        self.assertEqual(sub.stats["missed"], 0)
        self.assertEqual(sub.fileno(), sub.fileno())

        pub.close()  # SIGKILL
        readable, _, _ = select.select([sub], [], [], NEXT_TIMEOUT)
        self.assertEqual(readable, [sub], "select() did not wake when the publisher died")
        with self.assertRaises(zerohop.UnavailableError) as cm:
            sub.next(timeout=0)
        self.assertIn("went away", str(cm.exception))
        sub.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--share-peer", required=True, help="tests/share/zerohop_share_peer")
    parser.add_argument("--publisher", required=True, help="zerohop_py_share_publisher")
    args, rest = parser.parse_known_args()
    PEERS.share_peer, PEERS.publisher = args.share_peer, args.publisher
    unittest.main(argv=[sys.argv[0]] + rest)


if __name__ == "__main__":
    main()
