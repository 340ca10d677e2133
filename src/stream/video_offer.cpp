#include "stream/video_offer.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <string>
#include <vector>

#include "stream/sdp_extmap.hpp"
#include "stream/sdp_words.hpp"
#include "zerohop/error.hpp"

namespace zerohop::stream {
namespace {

constexpr std::size_t kMaxLineLength = 4096;

[[noreturn]] void malformed(std::size_t lineNo, std::string_view why) {
  throw Error(Errc::kInvalidArgument,
              "malformed SDP offer: line " + std::to_string(lineNo) + ": " + std::string(why));
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

bool parseInt(std::string_view s, int& out) {
  if (s.empty()) return false;
  const auto* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, out);
  return ec == std::errc() && ptr == end;
}

// One m= section, reduced to what the choice needs.
struct Media {
  std::string kind;
  int port = 0;
  std::vector<int> formats;
  std::string direction = "sendrecv";
  std::map<int, std::string> rtpmap;  // pt -> "h264/90000" (lower case)
  std::map<int, std::string> fmtp;    // pt -> parameters
  OfferedExtensions extmap{sentExtensionUris()};  // the readable a=extmap lines we send (see the header)
  std::vector<std::string> transportCc;  // payload types (or "*") with a=rtcp-fb:<pt> transport-cc
  std::vector<std::string> nack;         // payload types (or "*") with a=rtcp-fb:<pt> nack (plain: not "nack pli")
  bool hasUfrag = false, hasPwd = false, hasFingerprint = false;
};

// The whole offer, reduced to what the choice needs.
struct Offer {
  std::vector<Media> media;
  bool sessionUfrag = false, sessionPwd = false, sessionFingerprint = false;
};

// Value of `key` in "a=1;b=2" (case-insensitive key), empty when absent.
std::string fmtpValue(const std::string& params, std::string_view key) {
  std::size_t i = 0;
  while (i <= params.size()) {
    std::size_t j = params.find(';', i);
    if (j == std::string::npos) j = params.size();
    std::string_view item(params.data() + i, j - i);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    const auto eq = item.find('=');
    if (eq != std::string_view::npos && lower(item.substr(0, eq)) == lower(key)) {
      return lower(item.substr(eq + 1));
    }
    i = j + 1;
  }
  return {};
}

// 0 = not usable, 3 = exact 42e01f, 2 = other Constrained Baseline, 1 = Baseline.
int rank(const std::string& plid) {
  if (plid.size() != 6 ||
      !std::all_of(plid.begin(), plid.end(), [](unsigned char c) { return std::isxdigit(c) != 0; })) {
    return 0;
  }
  if (plid.compare(0, 2, "42") != 0) return 0;
  if (plid == "42e01f") return 3;
  const int constraints = std::stoi(plid.substr(2, 2), nullptr, 16);
  return (constraints & 0x40) != 0 ? 2 : 1;  // constraint_set1_flag: Constrained Baseline
}

// "a=fingerprint:<hash function> <bytes>" (RFC 8122 §5): a hash function of the IANA registry and as many
// colon-separated hex bytes as it makes. Anything else would be accepted now and fail the DTLS handshake
// later, so the offer is refused at once, saying why.
void checkFingerprint(std::size_t lineNo, std::string_view arg) {
  static const std::map<std::string, std::size_t> kBytes = {{"sha-1", 20},   {"sha-224", 28}, {"sha-256", 32},
                                                            {"sha-384", 48}, {"sha-512", 64}, {"md5", 16},
                                                            {"md2", 16}};
  const auto words = splitSpaces(arg);
  const std::string shown = std::string(arg.substr(0, 40)) + (arg.size() > 40 ? "..." : "");
  const auto hash = words.size() == 2 ? kBytes.find(lower(words[0])) : kBytes.end();
  if (hash == kBytes.end()) {
    malformed(lineNo, "a=fingerprint:" + shown +
                          " is not <hash function> <hex bytes> with a hash function of RFC 8122 (sha-256, ...); "
                          "the DTLS handshake could not check the viewer's certificate");
  }
  const std::string_view hex = words[1];
  const std::size_t want = hash->second;
  bool ok = hex.size() == want * 3 - 1;
  for (std::size_t i = 0; ok && i < hex.size(); ++i) {
    ok = i % 3 == 2 ? hex[i] == ':' : std::isxdigit(static_cast<unsigned char>(hex[i])) != 0;
  }
  if (!ok) {
    malformed(lineNo, "a=fingerprint:" + shown + " is not " + std::to_string(want) + " colon-separated hex bytes, as " +
                          hash->first + " makes; the DTLS handshake could not check the viewer's certificate");
  }
}

Offer parseOffer(std::string_view sdp) {
  Offer offer;
  std::vector<Media>& media = offer.media;
  bool& sessionUfrag = offer.sessionUfrag;
  bool& sessionPwd = offer.sessionPwd;
  bool& sessionFingerprint = offer.sessionFingerprint;
  if (sdp.empty()) throw Error(Errc::kInvalidArgument, "malformed SDP offer: the body is empty");
  std::size_t lineNo = 0;
  std::size_t pos = 0;
  bool sawVersion = false;
  while (pos < sdp.size()) {
    std::size_t nl = sdp.find('\n', pos);
    if (nl == std::string_view::npos) nl = sdp.size();
    std::string_view line = sdp.substr(pos, nl - pos);
    pos = nl + 1;
    ++lineNo;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    if (line.size() > kMaxLineLength) malformed(lineNo, "longer than 4096 bytes");
    for (char c : line) {
      if (static_cast<unsigned char>(c) < 0x20 && c != '\t')
        malformed(lineNo, "contains a control character");
    }
    if (line.size() < 2 || line[1] != '=' || !std::islower(static_cast<unsigned char>(line[0]))) {
      malformed(lineNo, "is not of the form <letter>=<value>");
    }
    if (!sawVersion && line != "v=0") malformed(lineNo, "an SDP description starts with \"v=0\"");
    sawVersion = true;
    const char type = line[0];
    const std::string_view value = line.substr(2);
    if (type == 'm') {
      const auto tok = splitSpaces(value);
      Media m;
      if (tok.size() < 4) malformed(lineNo, "m= needs <media> <port> <proto> <formats>");
      m.kind = lower(tok[0]);
      const auto slash = tok[1].find('/');
      if (!parseInt(tok[1].substr(0, slash), m.port) || m.port < 0 || m.port > 65535) {
        malformed(lineNo, "m= port is not a number in 0..65535");
      }
      for (std::size_t i = 3; i < tok.size(); ++i) {
        int pt = -1;
        if (parseInt(tok[i], pt)) m.formats.push_back(pt);
      }
      media.push_back(std::move(m));
      continue;
    }
    if (type != 'a') continue;
    const auto colon = value.find(':');
    const std::string name = lower(value.substr(0, colon));
    const std::string_view arg =
        colon == std::string_view::npos ? std::string_view{} : value.substr(colon + 1);
    Media* cur = media.empty() ? nullptr : &media.back();
    if (name == "ice-ufrag") {
      (cur ? cur->hasUfrag : sessionUfrag) = true;
    } else if (name == "ice-pwd") {
      (cur ? cur->hasPwd : sessionPwd) = true;
    } else if (name == "fingerprint") {
      checkFingerprint(lineNo, arg);
      (cur ? cur->hasFingerprint : sessionFingerprint) = true;
    } else if (cur &&
               (name == "sendrecv" || name == "recvonly" || name == "sendonly" || name == "inactive")) {
      cur->direction = name;
    } else if (cur && name == "extmap") {
      cur->extmap.add(arg);
    } else if (cur && name == "rtcp-fb") {
      const auto words = splitSpaces(arg);
      if (words.size() >= 2 && lower(words[1]) == "transport-cc") cur->transportCc.emplace_back(words[0]);
      if (words.size() == 2 && lower(words[1]) == "nack") cur->nack.emplace_back(words[0]);
    } else if (cur && (name == "rtpmap" || name == "fmtp")) {
      const auto sp = arg.find(' ');
      int pt = -1;
      if (sp == std::string_view::npos || !parseInt(arg.substr(0, sp), pt) || pt < 0 || pt > 127) {
        malformed(lineNo, "a=" + name + " needs <payload type 0..127> <value>");
      }
      (name == "rtpmap" ? cur->rtpmap : cur->fmtp)[pt] = std::string(arg.substr(sp + 1));
      if (name == "rtpmap") cur->rtpmap[pt] = lower(cur->rtpmap[pt]);
    }
  }
  if (!sawVersion) throw Error(Errc::kInvalidArgument, "malformed SDP offer: the body is empty");
  if (media.empty()) {
    throw Error(Errc::kInvalidArgument,
                "malformed SDP offer: it has no m= line (a WHEP viewer offers one video m-line)");
  }

  return offer;
}

// The video m-lines a WHEP viewer may receive on, in offer order: open (port != 0) and receiving.
// `refusal` says why there is none. Throws Error(kInvalidArgument) for one without ICE/DTLS credentials.
std::vector<std::size_t> receivingVideo(const Offer& offer, std::string& refusal) {
  std::vector<std::size_t> out;
  refusal = "the offer has no m=video line";
  for (std::size_t mi = 0; mi < offer.media.size(); ++mi) {
    const Media& m = offer.media[mi];
    if (m.kind != "video") continue;
    if (m.port == 0) {
      refusal = "the offer's video m-line is rejected (port 0)";
      continue;
    }
    if (m.direction == "sendonly" || m.direction == "inactive") {
      refusal = "the offer's video is " + m.direction + "; a WHEP viewer offers recvonly";
      continue;
    }
    if (!(m.hasUfrag || offer.sessionUfrag) || !(m.hasPwd || offer.sessionPwd) ||
        !(m.hasFingerprint || offer.sessionFingerprint)) {
      throw Error(Errc::kInvalidArgument,
                  "malformed SDP offer: the video m-line lacks a=ice-ufrag, a=ice-pwd or a=fingerprint "
                  "(WebRTC needs ICE credentials and a DTLS fingerprint)");
    }
    out.push_back(mi);
  }
  return out;
}

// The best H.264 payload type of `m` (see the header's order) into `best`; its rank, 0 = none usable.
// With the stream's level known, an id that covers it outranks every one that does not.
int bestH264(const Media& m, int mediaIndex, int streamLevel, VideoChoice& best) {
  int bestRank = 0;
  for (int pt : m.formats) {
    const auto rm = m.rtpmap.find(pt);
    if (rm == m.rtpmap.end() || rm->second != "h264/90000") continue;
    const auto fm = m.fmtp.find(pt);
    const std::string params = fm == m.fmtp.end() ? std::string{} : fm->second;
    if (fmtpValue(params, "packetization-mode") != "1") continue;
    const std::string plid = fmtpValue(params, "profile-level-id");
    int r = rank(plid);
    if (r == 0) continue;
    const int level = profileLevelIdLevel(plid);
    const bool covered = streamLevel == 0 || level >= streamLevel;
    if (covered) r += 10;
    if (r > bestRank) {
      bestRank = r;
      best = VideoChoice{mediaIndex, pt, -1, plid};
      best.levelAsymmetryAllowed = fmtpValue(params, "level-asymmetry-allowed") == "1";
      best.offeredLevel = level;
      best.streamLevel = streamLevel;
      best.levelCovered = covered;
    }
  }
  return bestRank;
}

// The first VP8 payload type of `m` (the offerer's preference), -1 if none.
int firstVp8(const Media& m) {
  for (int pt : m.formats) {
    const auto rm = m.rtpmap.find(pt);
    if (rm != m.rtpmap.end() && rm->second == "vp8/90000") return pt;
  }
  return -1;
}

// "H264 42e01f/mode 1, VP8, VP9, AV1": the video codecs the offer's receiving m-lines name (no rtx,
// red, ulpfec), for a refusal's text.
std::string offeredCodecs(const Offer& offer, const std::vector<std::size_t>& lines) {
  std::vector<std::string> names;
  for (std::size_t mi : lines) {
    const Media& m = offer.media[mi];
    for (int pt : m.formats) {
      const auto rm = m.rtpmap.find(pt);
      if (rm == m.rtpmap.end()) continue;
      std::string name = rm->second.substr(0, rm->second.find('/'));
      if (name == "rtx" || name == "red" || name == "ulpfec" || name == "flexfec-03") continue;
      std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::toupper(c); });
      if (name == "H264") {
        const auto fm = m.fmtp.find(pt);
        const std::string params = fm == m.fmtp.end() ? std::string{} : fm->second;
        const std::string plid = fmtpValue(params, "profile-level-id");
        const std::string mode = fmtpValue(params, "packetization-mode");
        name += " " + (plid.empty() ? std::string("(no profile-level-id)") : plid) + "/mode " + (mode.empty() ? "0" : mode);
      }
      if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
  }
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out.empty() ? "no video codec" : out;
}

// What the answer also takes from the chosen m-line: the extensions we send, transport-cc, the rtx pt.
void completeChoice(const Media& m, VideoChoice& best) {
  best.extensions = m.extmap.kept();
  const std::string chosenPt = std::to_string(best.payloadType);
  best.transportCcFeedback =
      std::find_if(m.transportCc.begin(), m.transportCc.end(),
                   [&](const std::string& p) { return p == chosenPt || p == "*"; }) != m.transportCc.end();
  best.nackFeedback = std::find_if(m.nack.begin(), m.nack.end(), [&](const std::string& p) {
                        return p == chosenPt || p == "*";
                      }) != m.nack.end();
  for (int pt : m.formats) {
    const auto rm = m.rtpmap.find(pt);
    const auto fm = m.fmtp.find(pt);
    if (rm != m.rtpmap.end() && rm->second == "rtx/90000" && fm != m.fmtp.end() &&
        fmtpValue(fm->second, "apt") == chosenPt) {
      best.rtxPayloadType = pt;
      break;
    }
  }
}

}  // namespace

int profileLevelIdLevel(std::string_view plid) {
  if (plid.size() != 6 ||
      !std::all_of(plid.begin(), plid.end(), [](unsigned char c) { return std::isxdigit(c) != 0; })) {
    return 0;
  }
  const int profile = std::stoi(std::string(plid.substr(0, 2)), nullptr, 16);
  const int constraints = std::stoi(std::string(plid.substr(2, 2)), nullptr, 16);
  const int level = std::stoi(std::string(plid.substr(4, 2)), nullptr, 16);
  // RFC 6184 §8.1: in Baseline/Main/Extended, level_idc 11 with constraint_set3_flag is level 1b.
  const bool baseFamily = profile == 0x42 || profile == 0x4d || profile == 0x58;
  if (level == 9 || (level == 11 && baseFamily && (constraints & 0x10) != 0)) return 9;
  return level;
}

std::string levelName(int levelIdc) {
  if (levelIdc == 9) return "1b";
  return std::to_string(levelIdc / 10) + "." + std::to_string(levelIdc % 10);
}

VideoChoice chooseVideo(std::string_view sdp, const SendableCodecs& sendable) {
  const Offer offer = parseOffer(sdp);
  std::string refusal;
  const std::vector<std::size_t> lines = receivingVideo(offer, refusal);
  if (lines.empty()) throw Error(Errc::kUnsupported, "unusable SDP offer: " + refusal);

  VideoChoice best;
  // H.264 whenever it is usable: the first video m-line with a usable H.264 is the one we serve.
  for (std::size_t mi : lines) {
    if (bestH264(offer.media[mi], static_cast<int>(mi), sendable.h264Level, best) > 0) {
      completeChoice(offer.media[mi], best);
      return best;
    }
  }
  if (sendable.vp8) {
    for (std::size_t mi : lines) {
      const int pt = firstVp8(offer.media[mi]);
      if (pt < 0) continue;
      best = VideoChoice{static_cast<int>(mi), pt, -1, {}};
      best.codec = Codec::kVP8;
      completeChoice(offer.media[mi], best);
      return best;
    }
  }
  std::string serverSends = "this server sends H.264 Constrained Baseline (packetization-mode=1, profile-level-id 42e01f)";
  if (sendable.vp8) {
    serverSends += " or VP8";
  } else if (!sendable.vp8WhyNot.empty()) {
    serverSends += "; VP8 is not available for this stream: " + sendable.vp8WhyNot;
  } else {
    serverSends += " only";
  }
  throw Error(Errc::kUnsupported, std::string("unusable SDP offer: it has no usable H.264") +
                                      (sendable.vp8 ? " and no VP8" : "") + " (it offers " +
                                      offeredCodecs(offer, lines) + "); " + serverSends);
}

std::optional<VideoChoice> chooseAudioOnly(std::string_view sdp) {
  const Offer offer = parseOffer(sdp);
  std::string refusal;
  if (!receivingVideo(offer, refusal).empty()) return std::nullopt;
  std::optional<AudioChoice> audio = chooseAudio(sdp);
  if (!audio) return std::nullopt;
  VideoChoice choice;
  choice.codec = Codec::kOpus;
  choice.audio = std::move(audio);
  return choice;
}

VideoChoice chooseH264(std::string_view sdp) { return chooseVideo(sdp, SendableCodecs{}); }

void checkPublishAnswer(std::string_view answer, int payloadType) {
  Offer parsed;
  try {
    parsed = parseOffer(answer);
  } catch (const Error& e) {
    throw Error(Errc::kProtocol, std::string("the answer is not usable SDP: ") + e.what());
  }
  std::string sections;
  for (const Media& m : parsed.media) {
    const bool receives = m.direction == "recvonly" || m.direction == "sendrecv";
    if (m.kind == "video" && m.port != 0 && receives &&
        std::find(m.formats.begin(), m.formats.end(), payloadType) != m.formats.end()) {
      return;
    }
    sections += (sections.empty() ? "m=" : ", m=") + m.kind + " port " + std::to_string(m.port) + " " + m.direction;
  }
  throw Error(Errc::kProtocol, "the answer has no usable video section (it has " + sections +
                                   "); it must accept the offer's H.264 video (payload type " +
                                   std::to_string(payloadType) + ") as recvonly or sendrecv");
}

}  // namespace zerohop::stream
