// A browser phone on JsSIP: register as one of the account's Clients over SIP/WebSocket (RFC 7118),
// call a number or another client, answer or decline incoming calls, send DTMF. The SIP login and
// password are the Client's; nothing is stored by the page.
/* global JsSIP */

const $ = (id) => document.getElementById(id);
const account = $('account');
const dial = $('dial');
const audio = $('remote-audio');

let ua = null;
let session = null;

// The server's WebSocket listener and default domain, as the server advertises them.
const settings = await fetch('/phone/config.json').then((r) => r.json());
const port = settings.wssPort ?? settings.wsPort;
account.server.value = port ? `${settings.wssPort ? 'wss' : 'ws'}://${location.hostname}:${port}` : '';
account.domain.value = settings.domain;

function show(id, text) {
  $(id).textContent = text;
}

account.addEventListener('submit', (event) => {
  event.preventDefault();
  ua?.stop();
  const form = new FormData(account);
  ua = new JsSIP.UA({
    sockets: [new JsSIP.WebSocketInterface(form.get('server'))],
    uri: `sip:${form.get('login')}@${form.get('domain')}`,
    password: form.get('password'),
    register: true,
  });
  ua.on('registered', () => {
    show('registration', 'Registered');
    $('phone').hidden = false;
    $('unregister').hidden = false;
  });
  ua.on('unregistered', () => show('registration', 'Not registered'));
  ua.on('registrationFailed', (e) => show('registration', `Registration failed: ${e.cause}`));
  ua.on('newRTCSession', ({ session: s, originator }) => {
    if (session) {
      // One call at a time: a second caller hears busy.
      if (originator === 'remote') s.terminate({ status_code: 486 });
      return;
    }
    track(s);
    if (originator === 'remote') {
      show('caller', s.remote_identity.uri.user);
      $('incoming').hidden = false;
      show('call-state', 'Ringing');
    }
  });
  ua.start();
});

$('unregister').addEventListener('click', () => {
  ua?.stop();
  ua = null;
  $('phone').hidden = true;
  $('unregister').hidden = true;
});

// A target without `@` is a number or a client's login in our domain; the server routes it.
dial.addEventListener('submit', (event) => {
  event.preventDefault();
  const target = new FormData(dial).get('target').trim();
  const uri = target.includes('@') ? `sip:${target}` : `sip:${target}@${account.domain.value}`;
  ua.call(uri, { mediaConstraints: { audio: true, video: false } });
});

$('hangup').addEventListener('click', () => session?.terminate());
$('answer').addEventListener('click', () => {
  session?.answer({ mediaConstraints: { audio: true, video: false } });
  $('incoming').hidden = true;
});
$('decline').addEventListener('click', () => session?.terminate({ status_code: 603 }));

for (const key of $('keypad').querySelectorAll('button')) {
  // RFC 4733 events in the media (the browser's RTCDTMFSender), as a desk phone sends them.
  key.addEventListener('click', () => {
    try {
      session?.sendDTMF(key.textContent, { transportType: 'RFC2833' });
    } catch (e) {
      // Before the media is connected the browser cannot send events yet.
      show('call-state', `Key ${key.textContent} not sent: ${e.message}`);
    }
  });
}

function track(s) {
  session = s;
  $('hangup').disabled = false;
  $('call').disabled = true;
  s.on('progress', () => show('call-state', s.direction === 'outgoing' ? 'Ringing…' : 'Ringing'));
  s.on('confirmed', () => show('call-state', 'In call'));
  // The remote audio track plays as soon as the browser has it.
  s.connection?.addEventListener('track', (e) => {
    audio.srcObject = e.streams[0];
  });
  s.on('peerconnection', ({ peerconnection }) =>
    peerconnection.addEventListener('track', (e) => {
      audio.srcObject = e.streams[0];
    }),
  );
  const ended = (e) => {
    session = null;
    $('incoming').hidden = true;
    $('hangup').disabled = true;
    $('call').disabled = false;
    show('call-state', `Ended (${e.cause})`);
  };
  s.on('ended', ended);
  s.on('failed', ended);
}
