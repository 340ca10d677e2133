#!/usr/bin/python3
"""Captures a recvonly video SDP offer from headless Chromium, the way a WHEP viewer makes one.

Usage: /usr/bin/python3 tests/stream/data/capture_offer.py > tests/stream/data/chromium_offer.sdp
Needs Debian's chromium, chromium-driver and python3-selenium (scripts/install-deps.sh).
chromium_offer.sdp was captured with this script from Chromium 156.0.8078.114.
"""
import sys

from selenium import webdriver

options = webdriver.ChromeOptions()
for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--allow-loopback-in-peer-connection",
             "--disable-features=WebRtcHideLocalIpsWithMdns"]:
    options.add_argument(flag)
driver = webdriver.Chrome(options=options)
try:
    sdp = driver.execute_async_script("""
const done = arguments[arguments.length - 1];
const pc = new RTCPeerConnection();
pc.addTransceiver('video', {direction: 'recvonly'});
pc.createOffer().then(o => pc.setLocalDescription(o)).then(() => new Promise(r => {
  if (pc.iceGatheringState === 'complete') r();
  pc.onicegatheringstatechange = () => { if (pc.iceGatheringState === 'complete') r(); };
  setTimeout(r, 3000);
})).then(() => done(pc.localDescription.sdp)).catch(e => done('ERR ' + e));
""")
    if sdp.startswith("ERR"):
        sys.exit(sdp)
    sys.stdout.write(sdp)
    print("captured from Chromium", driver.capabilities.get("browserVersion"), file=sys.stderr)
finally:
    driver.quit()
