-- The final SIP response of the INVITE that made the call leg (Twilio's SipResponseCode): what the far
-- end answered (or the status the server gave a call it could not send), 200 once answered.
ALTER TABLE calls ADD COLUMN sip_response_code integer;
