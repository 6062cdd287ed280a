public import LabCore

/// The lab's published test keys: what `"keys": "fixed"` (the server's) and
/// `"clientKeys": "fixed"` (a cx flow's clients') use instead of keys drawn at random, so that
/// two runs, on any machine, do the same work. They exist for the counted gate: the
/// instructions of RSA's public-key steps (the set-up of a new modulus) and of Ed25519
/// verification (a variable-time double scalar multiplication) depend on the key, and moved
/// between runs by up to 0.6% and 2.9%: more than the regressions the gate must catch.
///
/// **Never use them for anything secret**: their private halves are in this file. Made once
/// with `openssl genpkey` (RSA, PKCS#1 DER) and random bytes (the raw private keys and seeds
/// `CryptoProvider.decodePrivateKey` reads).
public enum FixedKeys {
    /// The RSA modulus sizes with fixed keys: the default sizes of `classic` and `rsa-modern`.
    public static let rsaBits = [512, 2048]

    /// Whether `spec` has a fixed key.
    public static func has(_ spec: KeySpec) -> Bool {
        guard case .rsa(let bits, _) = spec else { return true }
        return Self.rsaBits.contains(bits)
    }

    /// Why `spec` has no fixed key, or nil if it has one.
    public static func missing(_ spec: KeySpec) -> String? {
        guard !Self.has(spec) else { return nil }
        let sizes = Self.rsaBits.map { "RSA-\($0)" }.joined(separator: " and ")
        return "there is no fixed \(spec) key; fixed keys exist for \(sizes) only (and every other key type)"
    }

    /// A private key for `spec`: the fixed one, decoded, or a fresh one. Throws `.unsupported`
    /// for an RSA size without a fixed key (a scenario is refused before it runs; `lab serve
    /// --keys fixed` answers a client of that size `unsupported`).
    public static func key<P: CryptoProvider>(_ spec: KeySpec, fixed: Bool, provider: P) throws -> P.PrivateKey {
        guard fixed else { return try provider.generatePrivateKey(spec) }
        if let reason = Self.missing(spec) { throw LabError(.unsupported, reason) }
        return try provider.decodePrivateKey(Self.privateKey(spec), type: spec.type)
    }

    /// The fixed private key for `spec` (one that `has` it), as `decodePrivateKey` reads it.
    public static func privateKey(_ spec: KeySpec) -> [UInt8] {
        let hex: String
        switch spec {
        case .rsa(512, .encryption): hex = Self.rsa512Client
        case .rsa(512, .signature): hex = Self.rsa512Server
        case .rsa(2048, .encryption): hex = Self.rsa2048Client
        case .rsa(2048, .signature): hex = Self.rsa2048Server
        case .rsa: preconditionFailure("FixedKeys: there is no fixed \(spec) key (ask `has` first)")
        case .x25519: hex = "1c5f2bc4dcbd34a9664d308a22c4a5342ac9338d124eb4f0ec456a93244d1e01"
        case .ed25519: hex = "a109e47747e327d35cbc5fe92c7378b09643a22162f6cd405288bd0dd53fd20a"
        case .mlkem768: hex = "2e538af979075041d2d159caf0acded3a884bd742d8538d7de064357b21ad58c" + "11bb057601331e8716799148a3880fde22300a5fee42e52a38aff0c9a1dbbf66"
        case .mldsa65: hex = "22a40ae0bcf399678a9c10a885e6e5b662638fd5990546c46fdf2c11a6523801"
        }
        guard let bytes = [UInt8](hex: hex.filter { !$0.isWhitespace }) else {
            preconditionFailure("FixedKeys: the \(spec) key is not hexadecimal")
        }
        return bytes
    }

    private static let rsa512Client = """
        3082013b020100024100b3e711ccf9f010333c9a35b8a3331f5815f1de33ec7eab296b8e987b41f1d0057dbdd184e13d
        32f0c5024b7d095025b3e466ddc0b1e1879819a08942351343eb02030100010241008faafb83372268bd922b10b5c7d6
        feb408aa642a113643184be5cf8db7671618c4190be065a8685847fa26421db67becfddaf44b6295f7d5d4982d291b3f
        ec39022100ecd0b652dfa4be3eafbece58e1341e47810a35cbeef560e8e9814ce4f3734f85022100c27a0d27a88a07f9
        fd57ba6b4ac811fdc7ce7f4c1cb9f6a969ff2b4c00a0c8af02207d29ba93869c7de887dea3151ac1ff16efbec3bc2b6a
        097450a6044c25d7d63902210096a695aa33153a389dd867c0d59d46d2a10585f72009aeda6e120d2843144a61022015
        9c85054ff2dd118b10a06734e52af8cfa264c0b35cc861c2217340d0125967
        """

    private static let rsa512Server = """
        30820139020100024100d58bdc750fa3cd2f537d3652e232c3a722c29b520606687a08820c0b39dccefc675095e150fd
        942aa72d3018e3d75935a6704d1336a4bc190c28387f89f3c9af0203010001024069950c3c28ae715dabe6e5bc1730c8
        41d3d2ea5ea4b1f86815dacebfa22d457ce9002abc211095bc04d4cf82fdabe88dd4224c986bfa12c53e55ad7fb8b3b6
        f9022100f0670c8ada123d599b339cbc99dccc676ff5ba62ede91e3d64f55f534094a675022100e366bee8a22120993b
        aff8c9ea37aead53529126748f9adc795434a045b5d3130220572cb7129ed36065deeecf5660e0fd4a4102356d6c624d
        71ebeb427ef8fb2e8502200cdb0d25e7ac89c43fec95db0c63b37b56ff8ef72695cbc275157e9824f8bf8302200b24d7
        a333227685bd0f3c439d95cc0d56664158be60fa408c4a22303f783f6a
        """

    private static let rsa2048Client = """
        308204a30201000282010100a510d06754d2d98cbdf9ee8378fc80ffe296757bbb4f87415295bf6a3e80fbb791e7f601
        d3e22e2f9cc4aeba31fcd6e880cbe96eda4cba3cb22c6e5abc7406736a10854ad736d9849f395542b0d6e240a99f1e48
        932eeaf02684853c335e776704e07072baa97183aada6e12bd0331d8f8b9db6f1a4f8fae00807c1594e72431b9f16387
        63444a86742a5059715dec9df03063126a74dacd2490c022206de77fde6bb66a150d775a35ea343fc1387e7c03569a32
        cf24d143d0d431844ea3745cf732ade2359fcb3c435947648a10d24655676ab2da099c22bbca8bdb3ce7322ffa33b7e7
        9e599f421475f78e8652fd1f63182dd7fb84236dc5c20be46a7a68f10203010001028201000959336f0c11c8fa674401
        6b216e038c4fc93fac1b46a772b3fa568098e64b309c0081769c5e6c9e8bb2b946985029326520fca9278f3d8e49ca54
        66ffd1fe64de4bede5f831b0b8b4752b2154cc9c11c21edde3345ac2e433a4ebbad0c4a289e0c5294e861dd497a569d6
        3414cfafd75ef6d50e5774cc1409b93d2327c4be259a1e0f40886200881741f7e9104c045d38614b30f3fc3eebdae942
        98fb960f99f946b0a776d67a7c224b832ab55d75e5d8fa064948edcbd855f2bf8e2607410202ce5f5212c2c415978961
        8f1bafb52a24a7e208fb40d9ea19e444c4d662e4ffcd18156aca57f6b58cd08da24cc7cb520524ec86debcc78f184520
        9203d044b502818100dfe5ab1991df4ff6d6d3cc180f5343e0c2d6001551aa84d39d30faca899fc58109d4e2b01520a9
        fc19087d5b76443e69b5888ee3863208117f934738592a5bc1d1ff15ac61edb4664a3304522e6442bd0d3ae02b56d493
        7817ea642aa0bfed499b50a4b9b8f16c12e9b72bb5942645fafdb05b96f2cbab9d44de69f10e6ddeaf02818100bcbbb0
        10c6fd22e14aa8e73a43bc08222b5d0983eca27fe70e52201797f986ab32fd180b3cc8f5ed3e8a9240a7bb7dcd8c3bab
        06df706624e1d5e1e3a80938b4a1b70bc0cca02ad01d21ae26aa3316bb292e4f4ac065884a5e76ed786eed2b1a3b1f23
        130f444eda3a06e30252cc2bc9409fdf3c244f78fee322b4ee58191a5f02818029ea481ed0553b161ddfa6acb669c322
        57b7526aab503def93d4f08e6c3751f5374ef865387f55f351086ad76d8b97179919888e85b7e614c88a5ce1eaa76868
        1f951e8c9804b52a1527f9de1cbb3e57401bce8dae82bb5cd735552d39ccd4725c363bb05d342d245946a65326fa074d
        d6a266731adf1030b00ce74e6e8219170281802d3ae5b4ff9b46b2ab4bd32e59714499bbbeae3b1988d012359264f282
        8f6040c315789fa8cf987064de9cb236006ee3c5c9bef104b7512361a3fa60aeb2970e62fb152bfd5e1d2486f6bd5fb2
        c64f9a47023c2a73f5613641714af3e3d19ed4c87a6bd37383314a87418341d949e8ec703a602b6fa0442501961dba49
        0eab0d02818100dbdbe9b051bb87f1fb6d0a51f0a7baa2da260be9ed4258978880eada3900808e33b1b3c8323a71e31d
        7c011d828b8803fe14704514ccff7429005a2b3638fb0fc779f469b42073a663399eff2b50c656ae03d3a61b59863f59
        e74dc232adbf0fd65984bd439ac0020e4773ac7178204484ddda6ff944d8944097c499b3bca05a
        """

    private static let rsa2048Server = """
        308204a40201000282010100a6e6cd61704cc0215bc920f2881a838b542c79c0fbf67e6d11e8a885327a61d0e6e46180
        3b491caea5d46b3c787f9d48406c9ea72f1e93a7b173ed326043bfd79dccbb03bc3e4cbd3f71a385510794e02f9557c2
        a88b3b59b31b8bf043bfcd75d03f5ce09ebe8760725bb3c8c58af4b98567094c71ee441043a2d68a7e8f5c404a1ec7bf
        7eb0c79f4261091496d1c618dae1d3718206878f76514fab70c8be24b3b71ff54894f0b83cd811a7cae306256467757b
        c72b69efa51e69654a04cc1e37f75190f6005b32b9b86acdb87068aacf85c67d3e1c89656259c731d0562401b9785147
        73b8c156319d14457390f21331fecec4d7ed9c0041a4725b40672feb0203010001028201001999b872143c299254565e
        ffe4a19080dc19f0590a2cee8a835f390e29467d5f823310c38f14715a56a4650883012c1a6b8b5db08e3935f3d873cc
        33d8713be97252777324ba37a225aba425ec5e69d71365686f3ad41477f751a7dee43d74e1f7dde83caa0cd68e142c7d
        c0b39053666b9078ec29639f3c116bd655ab010968b1abcf091e7785498e5774dab51edf7aa0758cc057b6e81785c95d
        14b06b387e31bac087daed394d445cd6548abe2be67d14d1715b6147d8a91d3b9f86197ff79192d83044de207ebd3c58
        d059c7acd4b55188235ef732d09f79e4121af47e694aebf93fde58628734879f86038379c012a8d6d5904ccd11e3b662
        3fce5e4d6502818100d03b1d1fd6486ed019a494a7223cb0f87fe47c0d75601e081de0e73d579853e1e92aa6a836f7df
        12a158bcca0bf193ff48abcc81cf325048187c2f16ee264fad602332e16579d717c71c63fc2a8067462fe196c697d815
        586ce7c503055246fbc8e8b5d9f95756c8dc31a6d3ff465bff309f75b0089cbd304165f8b850f2e51702818100cd3084
        be8fa69b0507a1302934d34e90cdaf7283e216ea1f61e3d65aa1216aecd9792d2df67a295b34137a1014020553c8593b
        7100add42bd28415149eff664bcd228ca57a7cad4320ad02eacd48c7349da61c35718ce5d6aec365cb58b1c02ce1c55f
        f7c53833c59313f30c74371909910472381083590f0297bc4a2826f84d0281807c0f9c2c89b8a1fcee2a363ed5911f47
        0ebb8c85603721ed680fc4f5b1289a61704feef72db8c4790f141576b362fcf00dd5fd842174328ca1b9eb3c582b0f31
        96a3a1fed43ca140136b00cf0e6b6e1c4d0eb48c218fa63806ba9790532d5009570bfebc9d67c1d6ee09cf01638801eb
        aa8676d1a86fe9efc42702e69da3f98502818100ca67fa0a209a30811dad9b5c8a878710c05539996f053b9e096a3ea0
        d821a6e04d0683d2bb38766349538d2d1f0f7f41ce78777259411ff2ba8f205c5f1b814574ed87e0149bb82e67a54323
        6bad4714580eebf4ac3658e315321ad02485f3145301e850f9731f5ede5ee77a7989806137743357aab266bfafc70e2d
        f8bdb861028181008ea0eb82bbaa5d396dad274a152ad8764818205bae7acbfa9cc6c0792a6e5316b768af7dcf74fe95
        71a132b80c1f50a928479d6e2e5911d96ac68ffefa354462c60a48a4f0ff1c651af800a6e2bd3d0033dd2799c2795d8e
        b354a70e3ac0ddf8469eb8dd1e853dd6f95aa4b71691eff68db3ad8f7484dda0fab18da4feff64f3
        """
}
