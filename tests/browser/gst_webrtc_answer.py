"""webrtcbin as the answerer, the steps every Python sender/receiver of the tests takes: apply the remote
offer, (optionally adjust the transceivers), create and apply the answer, wait for ICE gathering, and return
the answer SDP with its candidates (non-trickle, as WHEP and WHIP want). Used by gst_whep_reference.py (the
benchmark's reference sender) and whip_receiver.py (the WHIP endpoint the tests publish to).
"""

from __future__ import annotations

import time

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstWebRTC", "1.0")
gi.require_version("GstSdp", "1.0")
from gi.repository import Gst, GstSdp, GstWebRTC  # noqa: E402


def answer_offer(webrtc, offer_sdp: str, after_offer=None, gather_timeout: float = 2.0) -> str:
    """Raises ValueError when the offer is not SDP or webrtcbin cannot answer it (the caller tears down).
    `after_offer(webrtc)` runs once the offer is applied (e.g. to set transceiver directions)."""
    ok, msg = GstSdp.SDPMessage.new_from_text(offer_sdp)
    if ok != GstSdp.SDPResult.OK:
        raise ValueError("the offer is not SDP")
    offer = GstWebRTC.WebRTCSessionDescription.new(GstWebRTC.WebRTCSDPType.OFFER, msg)
    p = Gst.Promise.new()
    webrtc.emit("set-remote-description", offer, p)
    p.wait()
    if after_offer:
        after_offer(webrtc)
    p = Gst.Promise.new()
    webrtc.emit("create-answer", None, p)
    p.wait()
    reply = p.get_reply()
    answer = reply.get_value("answer") if reply else None
    if answer is None:
        raise ValueError(f"webrtcbin could not answer: {reply and reply.to_string()}")
    p = Gst.Promise.new()
    webrtc.emit("set-local-description", answer, p)
    p.wait()
    deadline = time.monotonic() + gather_timeout
    while (webrtc.get_property("ice-gathering-state") != GstWebRTC.WebRTCICEGatheringState.COMPLETE
           and time.monotonic() < deadline):
        time.sleep(0.02)
    return webrtc.get_property("local-description").sdp.as_text()
